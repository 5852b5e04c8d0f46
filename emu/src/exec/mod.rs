//! The interpreter's front door: the public `Emulator` API (allocations, the device heap, copies,
//! launches) and the options a launch takes. `emu/README.md` has a map of the rooms below.

use std::collections::HashMap;

use crate::alu;
use crate::banks;
use crate::error::EmuError;
use crate::ir::*;
use crate::memory_model::MemoryModel;
use crate::module::Module;
use crate::printf;
use crate::race::{self, Racecheck};
use crate::report::{
    self, Access, AccessOp, Finding, FindingKind, Hazard, MemLocation, PrintfRecord, RunReport,
    SourceLoc, ThreadGroup, ThreadRef, WarpSyncProblem,
};
use crate::trace::{EventLane, LaneAccess, Recorder, Trace, TraceInstr, TraceOp, TraceWarp};

/// Generic addresses in this window are shared memory (`cvta.shared` adds it).
pub(crate) const SHARED_WIN: u64 = 0x0000_7F00_0000_0000;
/// Generic addresses in this window are the thread's local memory.
pub(crate) const LOCAL_WIN: u64 = 0x0000_7E00_0000_0000;
const WIN: u64 = 1 << 32;
const GLOBAL_BASE: u64 = 0x0000_0002_0000_0000;
/// Unmapped bytes between allocations, so a one-past-the-end access hits no allocation.
const GAP: u64 = 4096;
const MAX_SHARED: u32 = 48 * 1024;
/// Backward branches a diverged warp may take while other lanes wait before those lanes get a
/// turn (independent thread scheduling; see README, "Reconvergence").
const SPIN_LIMIT: u32 = 64;
/// Eight SMs' worth of 2048 threads: enough blocks interleave to show races between blocks,
/// few enough that their register files stay in the host's cache.
pub const DEFAULT_RESIDENT_THREADS: u32 = 16 * 1024;
/// Rounds of the hardware schedule with no block finishing before one more block is started, so
/// a resident block that waits for a flag from a block not yet started still makes progress.
/// Doubles after each such start, so long-running blocks start only a few extra.
const STALL_ROUNDS: u64 = 4096;
/// Host memory the resident blocks' register files may take.
const MAX_REGISTER_BYTES: u64 = 2 << 30;
/// The random and adversarial schedules start every block at once; past this many threads
/// their per-thread state would not fit (the hardware schedule runs any grid).
const MAX_ALL_AT_ONCE_THREADS: u64 = 1 << 24;
/// Device `malloc` hands out addresses from here up, above every host allocation and module
/// variable, so a new heap block always sorts last among the allocations.
const HEAP_BASE: u64 = 0x0000_7000_0000_0000;
/// `cudaLimitMallocHeapSize`'s default: `malloc` returns NULL beyond this many live bytes.
pub const DEFAULT_HEAP_BYTES: u64 = 8 << 20;
/// `cudaLimitPrintfFifoSize`'s default.
pub const DEFAULT_PRINTF_BUFFER_BYTES: usize = 1 << 20;
/// Nested calls a thread may make; a GPU's 1 KiB default stack overflows well before.
const MAX_CALL_DEPTH: usize = 1024;
/// Thread-instructions with no progress before the watchdog compares the threads' registers.
pub const DEFAULT_WATCHDOG_WINDOW: u64 = 4 << 20;
/// Default hard cap on thread-instructions: a safety net for kernels the watchdog cannot judge
/// (a spinner whose registers keep changing, e.g. one that counts its tries).
pub const DEFAULT_STEP_BUDGET: u64 = 10_000_000_000;

/// A device address returned by [`Emulator::alloc`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct DevicePtr(pub u64);

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LaunchConfig {
    pub grid: [u32; 3],
    pub block: [u32; 3],
    pub dynamic_shared_bytes: u32,
}

#[derive(Clone, Debug, PartialEq)]
pub enum KernelArg {
    U8(u8),
    U16(u16),
    U32(u32),
    I32(i32),
    U64(u64),
    I64(i64),
    F32(f32),
    F64(f64),
    Ptr(DevicePtr),
    /// A struct passed by value: its bytes as C lays them out.
    Bytes(Vec<u8>),
}

impl KernelArg {
    fn bytes(&self) -> Vec<u8> {
        match *self {
            KernelArg::Bytes(ref bytes) => bytes.clone(),
            KernelArg::U8(v) => vec![v],
            KernelArg::U16(v) => v.to_le_bytes().to_vec(),
            KernelArg::U32(v) => v.to_le_bytes().to_vec(),
            KernelArg::I32(v) => v.to_le_bytes().to_vec(),
            KernelArg::U64(v) => v.to_le_bytes().to_vec(),
            KernelArg::I64(v) => v.to_le_bytes().to_vec(),
            KernelArg::F32(v) => v.to_le_bytes().to_vec(),
            KernelArg::F64(v) => v.to_le_bytes().to_vec(),
            KernelArg::Ptr(p) => p.0.to_le_bytes().to_vec(),
        }
    }
}

/// How warps take turns.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Schedule {
    /// Deterministic round robin: every warp with work runs one instruction per turn.
    #[default]
    Hardware,
    /// A random warp runs a random number (1–32) of instructions, repeatedly.
    Random { seed: u64 },
    /// A random warp runs alone until it blocks at a barrier, exits, or makes a strong access
    /// or atomic on global memory (where blocks hand each other data), then another.
    Adversarial { seed: u64 },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RunOptions {
    pub schedule: Schedule,
    pub racecheck: bool,
    pub synccheck: bool,
    pub memcheck: bool,
    /// Reads of shared memory that no thread of the block wrote, and of global memory from
    /// [`Emulator::alloc_uninit`] or device `malloc` that nothing wrote.
    pub initcheck: bool,
    /// Hard cap on thread-instructions: the launch stops with `StepBudgetExhausted` when it runs
    /// out, progress or not. The watchdog ends stuck kernels long before.
    pub step_budget: u64,
    /// The watchdog's window, in thread-instructions: when a whole window passes with no
    /// progress (no store or atomic changed memory, no barrier completed, no thread exited or
    /// started) and every thread's registers are the same at its end as at its start, the
    /// launch stops with `Stuck`. 0 turns the watchdog off.
    pub watchdog_window: u64,
    /// Bytes of `printf` output kept per launch; later calls are counted as dropped.
    pub printf_buffer_bytes: usize,
    /// Under [`Schedule::Hardware`], how many threads' blocks are resident at once; the next
    /// block starts when one finishes, as blocks wait for a free SM on a GPU. Grids that fit
    /// run all their blocks at once. Random and adversarial schedules start every block at once.
    pub resident_threads: u32,
    /// Count shared-memory bank conflicts per `.cu` line into [`RunReport::bank_conflicts`]
    /// (see `banks.rs` for the model). Off by default: it costs a pass over the lanes of every
    /// shared load and store.
    pub bank_conflicts: bool,
    /// What counts as a race (default [`MemoryModel::Racecheck`]).
    pub memory_model: MemoryModel,
    /// Cores a launch may use; 0 (the default) means `RACETRACK_THREADS` when it is set to a
    /// positive number, otherwise every core. With two or more, the hardware schedule runs
    /// blocks on several cores and racecheck runs on cores of its own (see README, "Every
    /// core"); what a launch finds and computes is the same for every value.
    pub threads: u32,
}

/// The environment variable that sets [`RunOptions::threads`] when it is 0 (the command lines'
/// `--threads` reads it too).
pub const THREADS_ENV: &str = "RACETRACK_THREADS";

impl RunOptions {
    /// The cores this launch may use (see [`RunOptions::threads`]).
    pub fn cores(&self) -> usize {
        if self.threads > 0 {
            return self.threads as usize;
        }
        static AUTOMATIC: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
        *AUTOMATIC.get_or_init(|| {
            std::env::var(THREADS_ENV)
                .ok()
                .and_then(|v| v.trim().parse::<usize>().ok())
                .filter(|&n| n > 0)
                .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
        })
    }
}

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions {
            schedule: Schedule::Hardware,
            racecheck: true,
            synccheck: true,
            memcheck: true,
            initcheck: true,
            step_budget: DEFAULT_STEP_BUDGET,
            watchdog_window: DEFAULT_WATCHDOG_WINDOW,
            printf_buffer_bytes: DEFAULT_PRINTF_BUFFER_BYTES,
            resident_threads: DEFAULT_RESIDENT_THREADS,
            bank_conflicts: false,
            memory_model: MemoryModel::Racecheck,
            threads: 0,
        }
    }
}

pub(crate) struct Allocation {
    base: u64,
    /// Empty once a heap block is freed (its size stays in `heap`).
    data: Vec<u8>,
    label: String,
    heap: Option<HeapBlock>,
    /// For memory allocated uninitialized: one bit per byte, set once something wrote it.
    written: Option<Vec<u64>>,
    /// The device whose memory this is.
    device: u32,
}

/// A block from device `malloc`.
struct HeapBlock {
    size: u64,
    /// The `malloc` call's PC: heap findings from one call site are one finding.
    site: u32,
    freed: Option<Access>,
}

/// The device heap's bump pointer and its live bytes (`malloc` returns NULL past the limit).
struct Heap {
    next: u64,
    live: u64,
    limit: u64,
}

/// Owns device (global) memory and runs kernels on it.
pub struct Emulator {
    allocs: Vec<Allocation>,
    next: u64,
    loaded_modules: Vec<u64>,
    heap: Heap,
    devices: Devices,
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

/// Sets bits `off..off + len` of a bitmap.
fn mark_bits(bits: &mut [u64], off: usize, len: usize) {
    for b in off..off + len {
        if let Some(w) = bits.get_mut(b / 64) {
            *w |= 1 << (b % 64);
        }
    }
}

/// Whether bits `off..off + len` (at most 64) of a bitmap are all set.
#[inline(always)]
fn all_bits(bits: &[u64], off: usize, len: usize) -> bool {
    let (w, b) = (off / 64, off % 64);
    let want = |n: usize| if n >= 64 { u64::MAX } else { (1u64 << n) - 1 };
    let first = want(len.min(64 - b)) << b;
    if bits.get(w).is_none_or(|&x| x & first != first) {
        return false;
    }
    let rest = (b + len).saturating_sub(64);
    rest == 0
        || bits
            .get(w + 1)
            .is_some_and(|&x| x & want(rest) == want(rest))
}

/// Marks `off..off + len` of a bitmap written, a word at a time where it can.
#[inline(always)]
fn mark_bits_fast(bits: &mut [u64], off: usize, len: usize) {
    let (w, b) = (off / 64, off % 64);
    if b + len <= 64 {
        if let Some(x) = bits.get_mut(w) {
            *x |= (if len >= 64 {
                u64::MAX
            } else {
                (1u64 << len) - 1
            }) << b;
        }
    } else {
        mark_bits(bits, off, len);
    }
}

fn find_alloc(allocs: &[Allocation], addr: u64, len: u64) -> Option<usize> {
    let i = allocs.partition_point(|a| a.base <= addr);
    if i == 0 {
        return None;
    }
    let a = &allocs[i - 1];
    let end = a.base + a.data.len() as u64;
    if addr.checked_add(len)? <= end {
        Some(i - 1)
    } else {
        None
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
        let garbage = (0..bytes)
            .map(|i| ((i as u32).wrapping_mul(2_246_822_519) >> 24) as u8 | 0x81)
            .collect();
        self.insert_alloc(garbage, label, Some(vec![0; bytes.div_ceil(64)]))
    }

    fn insert_alloc(&mut self, data: Vec<u8>, label: &str, written: Option<Vec<u64>>) -> DevicePtr {
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
        let i = find_alloc(&self.allocs, ptr.0, bytes.len() as u64).ok_or_else(|| {
            EmuError::HostAccess(format!(
                "write of {} bytes at {:#x} is outside every allocation",
                bytes.len(),
                ptr.0
            ))
        })?;
        let a = &mut self.allocs[i];
        let off = (ptr.0 - a.base) as usize;
        a.data[off..off + bytes.len()].copy_from_slice(bytes);
        if let Some(written) = a.written.as_mut() {
            mark_bits(written, off, bytes.len());
        }
        Ok(())
    }

    pub fn read(&self, ptr: DevicePtr, out: &mut [u8]) -> Result<(), EmuError> {
        let i = find_alloc(&self.allocs, ptr.0, out.len() as u64).ok_or_else(|| {
            EmuError::HostAccess(format!(
                "read of {} bytes at {:#x} is outside every allocation",
                out.len(),
                ptr.0
            ))
        })?;
        let a = &self.allocs[i];
        let off = (ptr.0 - a.base) as usize;
        out.copy_from_slice(&a.data[off..off + out.len()]);
        Ok(())
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

    fn load_module_globals(&mut self, m: &Module) {
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

/// Runs `$body` for each lane `$l` set in `$mask`, in lane order. A full warp (the common case)
/// takes a plain counted loop, which the compiler unrolls and vectorizes.
macro_rules! lanes {
    ($mask:expr, $l:ident, $body:block) => {{
        let mut m__: u32 = $mask;
        if m__ == u32::MAX {
            for $l in 0..32usize {
                $body
            }
        } else {
            while m__ != 0 {
                let $l = m__.trailing_zeros() as usize;
                m__ &= m__ - 1;
                $body
            }
        }
    }};
}

mod block;
mod checks;
mod ctx;
mod device_calls;
mod devices;
mod instr;
mod launch;
mod memory;
mod parallel;
mod plan;
mod streams;
mod views;
mod warp;
mod watchdog;

use checks::*;
use ctx::*;
use devices::*;
pub use devices::{EventId, StreamId};
use instr::*;
use launch::*;
use memory::*;
use parallel::*;
use plan::Rounds;
use streams::*;
use views::*;
use warp::*;
use watchdog::*;
