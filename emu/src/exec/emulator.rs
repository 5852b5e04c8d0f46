//! The interpreter's front door: the public `Emulator` API (allocations, the device heap, copies,
//! launches). `emu/README.md` has a map of the rooms.

use super::allocs::{
    Allocation, DEFAULT_HEAP_BYTES, DevicePtr, GAP, GLOBAL_BASE, HEAP_BASE, Heap, find_alloc,
    mark_bits,
};
use super::args::{KernelArg, LaunchConfig};
use super::devices::Devices;
use super::timing::{KernelTally, LaunchTimings};
use crate::error::EmuError;
use crate::module::Module;
use crate::options::RunOptions;
use crate::report::RunReport;
use crate::trace::Trace;

/// Owns device (global) memory and runs kernels on it.
pub struct Emulator {
    pub(crate) allocs: Vec<Allocation>,
    pub(crate) next: u64,
    pub(crate) loaded_modules: Vec<u64>,
    pub(crate) heap: Heap,
    pub(crate) devices: Devices,
    /// Where the last launch's time went (see [`Emulator::last_launch_timings`]).
    pub(crate) last_timings: Option<LaunchTimings>,
    /// By kernel: the race detector's share of its last launch's work on several cores, which
    /// sizes the detector of its next launch (see `parallel/cores.rs`).
    pub(crate) detector_shares: std::collections::HashMap<String, f64>,
    /// By kernel, in the order each first ran: its launches added up.
    pub(crate) tallies: Vec<(String, KernelTally)>,
}

impl std::fmt::Debug for Emulator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Emulator")
            .field("allocations", &self.allocs.len())
            .finish()
    }
}

impl Default for Emulator {
    fn default() -> Self {
        Self::new()
    }
}

impl Emulator {
    pub fn new() -> Self {
        Emulator {
            allocs: Vec::new(),
            next: GLOBAL_BASE,
            loaded_modules: Vec::new(),
            heap: Heap {
                next: HEAP_BASE,
                live: 0,
                limit: DEFAULT_HEAP_BYTES,
            },
            devices: Devices::new(),
            last_timings: None,
            detector_shares: std::collections::HashMap::new(),
            tallies: Vec::new(),
        }
    }

    /// Sets the device heap's size (`cudaDeviceSetLimit(cudaLimitMallocHeapSize, bytes)`).
    pub fn set_heap_limit(&mut self, bytes: u64) {
        self.heap.limit = bytes;
    }

    /// Allocates `bytes` of global memory, zeroed. `label` names it in reports (`histo[65]`).
    pub fn alloc(&mut self, bytes: usize, label: &str) -> DevicePtr {
        self.insert_alloc(vec![0; bytes], label, None)
    }

    /// Allocates `bytes` of global memory that holds garbage, as `cudaMalloc`'s does: initcheck
    /// reports a kernel's read of any byte that neither [`Emulator::write`] nor a kernel wrote.
    pub fn alloc_uninit(&mut self, bytes: usize, label: &str) -> DevicePtr {
        self.try_alloc_uninit(bytes, label)
            .unwrap_or_else(|_| std::alloc::handle_alloc_error(std::alloc::Layout::new::<u8>()))
    }

    /// [`Emulator::alloc`], or [`EmuError::OutOfMemory`] where this machine cannot hold it
    /// (a program's large `cudaMalloc` gets `cudaErrorMemoryAllocation`, not an abort).
    pub fn try_alloc(&mut self, bytes: usize, label: &str) -> Result<DevicePtr, EmuError> {
        let data = zeroed(bytes)?;
        Ok(self.insert_alloc(data, label, None))
    }

    /// [`Emulator::alloc_uninit`], or [`EmuError::OutOfMemory`] where this machine cannot
    /// hold it.
    pub fn try_alloc_uninit(&mut self, bytes: usize, label: &str) -> Result<DevicePtr, EmuError> {
        let mut garbage = reserved(bytes)?;
        garbage.extend(
            (0..bytes).map(|i| ((i as u32).wrapping_mul(2_246_822_519) >> 24) as u8 | 0x81),
        );
        let written = zeroed(bytes.div_ceil(64))?;
        Ok(self.insert_alloc(garbage, label, Some(written)))
    }

    /// Allocates `bytes` of global memory at the address `base`, holding `data`: memory that
    /// the host reaches at the same address (pinned, mapped or managed memory, which unified
    /// addressing gives one address on both sides). Refused when it would overlap an allocation
    /// or a window the emulator keeps for itself.
    pub fn alloc_at(
        &mut self,
        base: u64,
        data: Vec<u8>,
        label: &str,
    ) -> Result<DevicePtr, EmuError> {
        let end = base
            .checked_add(data.len().max(1) as u64)
            .ok_or_else(|| EmuError::HostAccess(format!("allocation at {base:#x} wraps around")))?;
        let reserved = [(0, GLOBAL_BASE), (crate::module::GLOBAL_VAR_BASE, u64::MAX)];
        let overlaps = |lo: u64, hi: u64| base < hi && lo < end;
        if reserved.iter().any(|&(lo, hi)| overlaps(lo, hi))
            || (GLOBAL_BASE..self.next).contains(&base)
            || self
                .allocs
                .iter()
                .any(|a| overlaps(a.base, a.base + a.data.len().max(1) as u64))
        {
            return Err(EmuError::HostAccess(format!(
                "{} bytes at {base:#x} overlap memory the emulator already holds",
                data.len()
            )));
        }
        let a = Allocation {
            base,
            data,
            label: label.to_string(),
            heap: None,
            written: None,
            device: self.devices.current,
        };
        let i = self.allocs.partition_point(|x| x.base <= base);
        self.allocs.insert(i, a);
        Ok(DevicePtr(base))
    }

    /// [`Emulator::alloc_at`] for memory that holds garbage until written, as device memory
    /// CUDA hands out at an address it chose earlier does (a graph's allocation node): initcheck
    /// reports a kernel's read of any byte nothing wrote.
    pub fn alloc_uninit_at(
        &mut self,
        base: u64,
        bytes: usize,
        label: &str,
    ) -> Result<DevicePtr, EmuError> {
        let ptr = self.alloc_at(base, vec![0; bytes], label)?;
        if let Some(a) = self.allocs.iter_mut().find(|a| a.base == base) {
            a.written = Some(vec![0; bytes.div_ceil(64)]);
        }
        Ok(ptr)
    }

    /// The allocation that holds `ptr`: its start, its size and its label.
    pub fn allocation_of(&self, ptr: DevicePtr) -> Option<(DevicePtr, usize, &str)> {
        let i = find_alloc(&self.allocs, ptr.0, 1)?;
        let a = &self.allocs[i];
        Some((DevicePtr(a.base), a.data.len(), a.label.as_str()))
    }

    /// The label of the allocation that starts at `ptr`, an empty one included (which holds no
    /// address, so [`Emulator::allocation_of`] finds none): a kernel handed an empty buffer
    /// still names it.
    pub fn label_at_start(&self, ptr: DevicePtr) -> Option<&str> {
        let i = self.allocs.partition_point(|a| a.base < ptr.0);
        let a = self.allocs.get(i).filter(|a| a.base == ptr.0)?;
        Some(a.label.as_str())
    }

    pub(crate) fn insert_alloc(
        &mut self,
        data: Vec<u8>,
        label: &str,
        written: Option<Vec<u64>>,
    ) -> DevicePtr {
        let base = self.next;
        self.next = (base + data.len().max(1) as u64 + GAP).div_ceil(256) * 256;
        let a = Allocation {
            base,
            data,
            label: label.to_string(),
            heap: None,
            written,
            device: self.devices.current,
        };
        let i = self.allocs.partition_point(|x| x.base <= base);
        self.allocs.insert(i, a);
        DevicePtr(base)
    }

    /// Renames the allocation that starts at `ptr` in reports: a buffer made before anyone
    /// knew which kernel parameter it would be (`cuda.to_device(a)`) takes that parameter's
    /// name at the launch.
    pub fn relabel(&mut self, ptr: DevicePtr, label: &str) -> Result<(), EmuError> {
        let alloc = self
            .allocs
            .iter_mut()
            .find(|a| a.base == ptr.0)
            .ok_or_else(|| {
                EmuError::HostAccess(format!(
                    "relabel of {:#x}, which is not the start of an allocation",
                    ptr.0
                ))
            })?;
        alloc.label = label.to_string();
        Ok(())
    }

    pub fn free(&mut self, ptr: DevicePtr) -> Result<(), EmuError> {
        match self.allocs.iter().position(|a| a.base == ptr.0) {
            Some(i) => {
                self.allocs.remove(i);
                Ok(())
            }
            None => Err(EmuError::HostAccess(format!(
                "free of {:#x}, which is not an allocation",
                ptr.0
            ))),
        }
    }

    pub fn write(&mut self, ptr: DevicePtr, bytes: &[u8]) -> Result<(), EmuError> {
        self.host_bytes_mut(ptr, bytes.len())?
            .copy_from_slice(bytes);
        Ok(())
    }

    pub fn read(&self, ptr: DevicePtr, out: &mut [u8]) -> Result<(), EmuError> {
        out.copy_from_slice(self.host_bytes(ptr, out.len())?);
        Ok(())
    }

    /// The `len` bytes of global memory at `ptr`, for the host to read where they are, as
    /// [`Emulator::read`] copies them: a large buffer can be copied out on several cores.
    pub fn host_bytes(&self, ptr: DevicePtr, len: usize) -> Result<&[u8], EmuError> {
        let i = find_alloc(&self.allocs, ptr.0, len as u64).ok_or_else(|| {
            EmuError::HostAccess(format!(
                "read of {len} bytes at {:#x} is outside every allocation",
                ptr.0
            ))
        })?;
        let a = &self.allocs[i];
        let off = (ptr.0 - a.base) as usize;
        Ok(&a.data[off..off + len])
    }

    /// The `len` bytes of global memory at `ptr`, for the host to write where they are, as
    /// [`Emulator::write`] does: initcheck counts all of them written, so the caller writes
    /// every byte.
    pub fn host_bytes_mut(&mut self, ptr: DevicePtr, len: usize) -> Result<&mut [u8], EmuError> {
        let i = find_alloc(&self.allocs, ptr.0, len as u64).ok_or_else(|| {
            EmuError::HostAccess(format!(
                "write of {len} bytes at {:#x} is outside every allocation",
                ptr.0
            ))
        })?;
        let a = &mut self.allocs[i];
        let off = (ptr.0 - a.base) as usize;
        if let Some(written) = a.written.as_mut() {
            mark_bits(written, off, len);
        }
        Ok(&mut a.data[off..off + len])
    }

    /// The device memory of `module`'s `.global` or `.const` variable `name` (its PTX name) and
    /// its size, for the host to write before a launch (`cudaMemcpyToSymbol`) or read after.
    pub fn symbol(&mut self, module: &Module, name: &str) -> Option<(DevicePtr, usize)> {
        self.load_module_globals(module);
        // Globals keep their demangled names (for reports); the host names them as in PTX.
        let wanted = crate::parse::demangle(name);
        let global = module.globals.iter().find(|g| g.name == wanted)?;
        let i = find_alloc(&self.allocs, global.addr, 1)?;
        Some((DevicePtr(global.addr), self.allocs[i].data.len()))
    }

    pub(crate) fn load_module_globals(&mut self, m: &Module) {
        if self.loaded_modules.contains(&m.id) {
            return;
        }
        self.loaded_modules.push(m.id);
        for g in &m.globals {
            if find_alloc(&self.allocs, g.addr, 1).is_some() {
                continue;
            }
            let a = Allocation {
                base: g.addr,
                data: g.init.clone(),
                label: g.name.clone(),
                heap: None,
                written: None,
                device: 0,
            };
            let i = self.allocs.partition_point(|x| x.base <= g.addr);
            self.allocs.insert(i, a);
        }
    }

    /// Runs `entry` to completion (or until the step budget, or a deadlock). Findings of the
    /// checkers are in the report; `Err` means the launch itself could not run.
    pub fn launch(
        &mut self,
        module: &Module,
        entry: &str,
        config: &LaunchConfig,
        args: &[KernelArg],
        options: &RunOptions,
    ) -> Result<RunReport, EmuError> {
        self.run_launch(module, entry, config, args, options, None)
            .map(|(report, _)| report)
    }

    /// [`Emulator::launch`], recording every step of every warp (see `emu/TRACE.md`) for at
    /// most `max_events` events; a launch that needs more is refused with
    /// [`EmuError::TraceTooLong`] rather than cut short.
    pub fn launch_traced(
        &mut self,
        module: &Module,
        entry: &str,
        config: &LaunchConfig,
        args: &[KernelArg],
        options: &RunOptions,
        max_events: usize,
    ) -> Result<(RunReport, Trace), EmuError> {
        let (report, recorder) =
            self.run_launch(module, entry, config, args, options, Some(max_events))?;
        match recorder {
            Some(r) if !r.overflowed => Ok((report, r.trace)),
            _ => Err(EmuError::TraceTooLong {
                entry: entry.to_string(),
                limit: max_events,
            }),
        }
    }
}

impl Emulator {
    /// Where the last launch's time went (`None` before the first launch, and for a launch that
    /// was refused).
    pub fn last_launch_timings(&self) -> Option<&LaunchTimings> {
        self.last_timings.as_ref()
    }

    /// Every kernel launched so far (device-side launches included), in the order each first
    /// ran, with its launches added up.
    pub fn kernel_tallies(&self) -> &[(String, KernelTally)] {
        &self.tallies
    }

    pub(crate) fn tally(&mut self, entry: &str, timings: &LaunchTimings, thread_instructions: u64) {
        match self.tallies.iter_mut().find(|(name, _)| name == entry) {
            Some((_, tally)) => tally.add(timings, thread_instructions),
            None => {
                let mut tally = KernelTally::default();
                tally.add(timings, thread_instructions);
                self.tallies.push((entry.to_string(), tally));
            }
        }
    }
}

/// `count` zeroes, or [`EmuError::OutOfMemory`] where this machine cannot hold them.
fn zeroed<T: Clone + Default>(count: usize) -> Result<Vec<T>, EmuError> {
    let mut data = reserved(count)?;
    data.resize(count, T::default());
    Ok(data)
}

/// An empty vector with room for `count` items, or [`EmuError::OutOfMemory`] where this machine
/// cannot hold them.
fn reserved<T>(count: usize) -> Result<Vec<T>, EmuError> {
    let bytes = count.saturating_mul(std::mem::size_of::<T>());
    let mut data = Vec::new();
    if !host_can_hold(bytes) || data.try_reserve_exact(count).is_err() {
        return Err(EmuError::OutOfMemory { bytes });
    }
    Ok(data)
}

/// Whether the host has `bytes` to spare: the memory Linux says is available (less a tenth
/// for everything else), asked only for allocations of 64 MiB or more. Linux grants far more
/// than it has and kills the process when the pages are touched, so asking the allocator is
/// not enough.
fn host_can_hold(bytes: usize) -> bool {
    if bytes < 64 << 20 {
        return true;
    }
    let Ok(info) = std::fs::read_to_string("/proc/meminfo") else {
        return true;
    };
    let available_kib = info
        .lines()
        .find_map(|l| l.strip_prefix("MemAvailable:"))
        .and_then(|v| v.split_whitespace().next()?.parse::<u64>().ok());
    available_kib.is_none_or(|kib| (bytes as u64) <= kib * 1024 / 10 * 9)
}
