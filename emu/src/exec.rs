//! The interpreter: warps, scheduling, memory, barriers, and the hooks into the checkers.

use std::collections::HashMap;

use crate::alu;
use crate::banks;
use crate::error::EmuError;
use crate::ir::*;
use crate::parse::Module;
use crate::printf;
use crate::race::{self, Race};
use crate::report::{
    self, Access, AccessOp, Finding, FindingKind, MemLocation, PrintfRecord, RunReport, SourceLoc,
    ThreadGroup, ThreadRef, WarpSyncProblem,
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

#[derive(Clone, Copy, Debug, PartialEq)]
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
}

impl KernelArg {
    fn bytes(&self) -> Vec<u8> {
        match *self {
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
        };
        let i = self.allocs.partition_point(|x| x.base <= base);
        self.allocs.insert(i, a);
        DevicePtr(base)
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

    fn run_launch(
        &mut self,
        module: &Module,
        entry: &str,
        config: &LaunchConfig,
        args: &[KernelArg],
        options: &RunOptions,
        trace_limit: Option<usize>,
    ) -> Result<(RunReport, Option<Box<Recorder>>), EmuError> {
        let fidx = module
            .funcs
            .iter()
            .position(|f| f.is_entry && f.name == entry)
            .ok_or_else(|| EmuError::UnknownEntry(entry.to_string()))?;
        let bad = |message: String| EmuError::BadLaunch {
            entry: entry.to_string(),
            message,
        };
        let f = &module.funcs[fidx];
        let [bx, by, bz] = config.block;
        let [gx, gy, gz] = config.grid;
        if config.block.contains(&0) || config.grid.contains(&0) {
            return Err(bad(format!(
                "grid {:?} and block {:?} must have no zero dimension",
                config.grid, config.block
            )));
        }
        let tpb64 = bx as u64 * by as u64 * bz as u64;
        if tpb64 > 1024 || bz > 64 {
            return Err(bad(format!(
                "block {bx}x{by}x{bz} has {tpb64} threads; the limit is 1024 (and z <= 64)"
            )));
        }
        if gx > i32::MAX as u32 || gy > 65535 || gz > 65535 {
            return Err(bad(format!(
                "grid {gx}x{gy}x{gz}: x is limited to 2147483647, y and z to 65535"
            )));
        }
        let nblocks = gx as u64 * gy as u64 * gz as u64;
        let tpb = tpb64 as u32;
        let wpb = tpb.div_ceil(32);
        // Only resident blocks have threads, registers and shared memory: the hardware schedule
        // starts the next block when one finishes, so any grid runs in bounded memory.
        let resident_blocks = match options.schedule {
            Schedule::Hardware => (options.resident_threads / tpb).max(1) as u64,
            Schedule::Random { .. } | Schedule::Adversarial { .. } => {
                if nblocks * tpb64 > MAX_ALL_AT_ONCE_THREADS {
                    return Err(bad(format!(
                        "the random and adversarial schedules start every block at once, and {} threads are more than they hold ({MAX_ALL_AT_ONCE_THREADS}); the hardware schedule runs any grid",
                        nblocks * tpb64
                    )));
                }
                nblocks
            }
        }
        .min(nblocks);
        let reg_bytes = resident_blocks * wpb as u64 * 32 * (module.nregs as u64) * 8;
        if reg_bytes > MAX_REGISTER_BYTES {
            return Err(bad(format!(
                "{resident_blocks} resident blocks of {tpb} threads with {} registers each need more than the emulator's {} MiB of registers; lower RunOptions::resident_threads",
                module.nregs,
                MAX_REGISTER_BYTES >> 20
            )));
        }
        let resident_blocks = resident_blocks as u32;
        if trace_limit.is_some() && nblocks > u32::MAX as u64 / wpb as u64 {
            return Err(bad(format!("{nblocks} blocks are too many to trace")));
        }
        let total_shared = module.static_shared as u64 + config.dynamic_shared_bytes as u64;
        if total_shared > MAX_SHARED as u64 {
            return Err(bad(format!(
                "{} bytes of static + {} bytes of dynamic shared memory exceed 48 KiB",
                module.static_shared, config.dynamic_shared_bytes
            )));
        }
        if args.len() != f.params.len() {
            return Err(bad(format!(
                "kernel takes {} arguments, {} given",
                f.params.len(),
                args.len()
            )));
        }
        let mut kparams = vec![0u8; f.kparam_size as usize];
        for (i, (a, p)) in args.iter().zip(&f.params).enumerate() {
            let b = a.bytes();
            if b.len() as u32 != p.size {
                return Err(bad(format!(
                    "argument {i} is {} bytes ({a:?}) but the parameter is {} bytes",
                    b.len(),
                    p.size
                )));
            }
            if matches!(a, KernelArg::Ptr(_)) && p.ty.is_some_and(|t| t.float()) {
                return Err(bad(format!(
                    "argument {i} is a pointer but the parameter is a float"
                )));
            }
            let off = p.offset as usize;
            kparams[off..off + b.len()].copy_from_slice(&b);
        }
        self.load_module_globals(module);
        let dyn_base = module.static_shared.div_ceil(16) * 16;
        let mut shared_size = if config.dynamic_shared_bytes > 0 {
            dyn_base + config.dynamic_shared_bytes
        } else {
            module.static_shared
        };
        // The reserved region (cooperative groups' multi-warp tile barriers) follows the rest.
        let reserved_base = shared_size.div_ceil(16) * 16;
        if module.reserved_smem {
            shared_size = reserved_base + crate::parse::RESERVED_SMEM;
        }
        // Uninitialized shared memory holds garbage on hardware; zeros would hide missing
        // initialization, so fill it with a nonzero pattern.
        let mut garbage: Vec<u8> = (0..shared_size as usize)
            .map(|i| ((i as u32).wrapping_mul(2_654_435_761) >> 24) as u8 | 0x41)
            .collect();
        // Except the reserved region, which the launch clears, as a GPU's does.
        if module.reserved_smem {
            garbage[reserved_base as usize..].fill(0);
        }
        let trace = trace_limit.map(|limit| {
            Box::new(self.recorder(
                module,
                limit,
                nblocks as u32,
                tpb,
                wpb,
                config.dynamic_shared_bytes,
            ))
        });
        let ctx = Ctx {
            m: module,
            allocs: &mut self.allocs,
            heap: &mut self.heap,
            opts: *options,
            grid: config.grid,
            block: config.block,
            tpb,
            wpb,
            kparams,
            shared: Vec::new(),
            shared_init: garbage,
            shared_written: Vec::new(),
            shared_words: (shared_size as usize).div_ceil(64),
            shared_size,
            dyn_base,
            reserved_base,
            dyn_size: config.dynamic_shared_bytes,
            local: Vec::new(),
            local_size: module.local_size,
            race: if options.racecheck {
                Some(Race::new(tpb, wpb, bx))
            } else {
                None
            },
            findings: Collector::default(),
            last_alloc: 0,
            clock: 0,
            thread_instrs: 0,
            progress: 0,
            aborted: false,
            refusal: None,
            printf: Vec::new(),
            printf_bytes: 0,
            printf_dropped: 0,
            touched_global_sync: false,
            trace,
            banks: options.bank_conflicts.then(Box::default),
        };
        let mut l = Launch {
            ctx,
            entry_pc: f.start,
            warps: Vec::new(),
            blocks: Vec::new(),
            nblocks,
            resident_blocks,
            started: 0,
            free_slots: Vec::new(),
            watchdog: Watchdog {
                next_check: options.watchdog_window,
                ..Watchdog::default()
            },
        };
        let completed = l.run();
        if let Some(refusal) = l.ctx.refusal.take() {
            return Err(refusal);
        }
        let thread_instructions = l.ctx.thread_instrs;
        let bank_conflicts = match &l.ctx.banks {
            Some(tally) => tally.by_line(|pc| l.ctx.src(pc)),
            None => Vec::new(),
        };
        let shadow_bytes = l.ctx.race.as_ref().map_or(0, Race::shadow_bytes);
        Ok((
            RunReport {
                bank_conflicts,
                findings: l.ctx.findings.list,
                completed,
                thread_instructions,
                printf: l.ctx.printf,
                printf_dropped: l.ctx.printf_dropped,
                shadow_bytes,
            },
            l.ctx.trace,
        ))
    }

    /// A recorder for a launch of `module`: its warps, its instructions' lines, the global
    /// allocations (with their contents now, before the launch) and every block's shared
    /// variables.
    fn recorder(
        &self,
        m: &Module,
        limit: usize,
        nblocks: u32,
        tpb: u32,
        wpb: u32,
        dynamic_shared_bytes: u32,
    ) -> Recorder {
        let warps = (0..nblocks)
            .flat_map(|block| {
                (0..wpb).map(move |wi| TraceWarp {
                    block,
                    first_thread: wi * 32,
                    lanes: (tpb - wi * 32).min(32),
                })
            })
            .collect();
        let program = m
            .code
            .iter()
            .map(|ins| {
                let loc = m.locs.get(ins.loc as usize);
                TraceInstr {
                    line: loc.map_or(0, |l| l.line),
                    inlined_at: loc.and_then(|l| l.inlined_at.map(|x| x.1)),
                    ptx_line: ins.ptx_line,
                }
            })
            .collect();
        let globals = self
            .allocs
            .iter()
            .map(|a| {
                let initial =
                    (a.data.len() <= crate::trace::MAX_INITIAL_BYTES).then(|| a.data.clone());
                (a.label.clone(), a.data.len() as u64, initial)
            })
            .collect();
        let mut shared: Vec<(String, u64, u64)> = m
            .shared
            .iter()
            .map(|v| (v.name.clone(), v.offset as u64, v.size as u64))
            .collect();
        if dynamic_shared_bytes > 0 {
            let name = m
                .dyn_names
                .first()
                .cloned()
                .unwrap_or_else(|| "extern __shared__".into());
            let base = m.static_shared.div_ceil(16) * 16;
            shared.push((name, base as u64, dynamic_shared_bytes as u64));
        }
        Recorder::new(limit, warps, program, globals, shared, nblocks)
    }
}

#[derive(Default)]
struct Collector {
    keys: HashMap<(FindingKind, u32, u32, u64), usize>,
    list: Vec<Finding>,
}

impl Collector {
    /// Counts a repeat, or adds a new finding and returns its index.
    fn add(
        &mut self,
        key: (FindingKind, u32, u32, u64),
        make: impl FnOnce() -> Finding,
    ) -> Option<usize> {
        if let Some(&i) = self.keys.get(&key) {
            self.list[i].count += 1;
            None
        } else {
            self.keys.insert(key, self.list.len());
            self.list.push(make());
            Some(self.list.len() - 1)
        }
    }
}

#[derive(Clone, Default)]
struct Bar {
    arrived: u32,
    expected: Option<u32>,
    /// (PC, threads arrived there, global id of the first).
    sites: Vec<(u32, u32, u64)>,
    red: u32,
    /// Some arrival is a `bar.red` whose result goes to a register.
    red_dest: bool,
}

/// A resident block's barrier state (one per slot).
#[derive(Default)]
struct BlockState {
    live: u32,
    exited: u32,
    /// Global thread id and PC of the first thread that exited.
    first_exit: Option<(u64, u32)>,
    bars: Vec<Bar>,
}

#[derive(Default)]
struct Warp {
    /// Global linear block index.
    block: u64,
    /// Resident slot of the block.
    slot: u32,
    /// Thread index (linear, within the block) of lane 0.
    first: u32,
    /// Resident warp index: `slot * warps_per_block + warp`.
    gw: u32,
    /// PC of the lanes in `active`. Other lanes' PCs are in `lane_pc`.
    pc: u32,
    active: u32,
    live: u32,
    blocked: u32,
    /// Blocked lanes that wait in a warp-collective op (shfl/vote/bar.warp) rather than a barrier.
    wsync_wait: u32,
    /// The mask each waiting lane passed to its warp-collective op.
    wsync_mask: [u32; 32],
    lane_pc: [u32; 32],
    bar_id: [u8; 32],
    regs: Vec<u64>,
    tparam: Vec<u8>,
    stacks: Vec<Vec<u32>>,
    /// Per lane, the saved state of each active call into a recursive function.
    frames: Vec<Vec<Frame>>,
    spin: u32,
    favored: Option<u8>,
}

/// What a call into a recursive function saves for one lane: the callee's registers, `.param`
/// bytes and local memory, which the callee's own activation is about to overwrite.
struct Frame {
    regs: Vec<u64>,
    tparam: Vec<u8>,
    local: Vec<u8>,
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

/// Runs `f` on the operands of every lane of `exec` and writes the result to register slot base
/// `d`. Monomorphized per operation, so the operation and type are decided once per instruction;
/// register and immediate operands are read without going through `Ctx::get`.
#[inline(always)]
fn map2(
    ctx: &Ctx,
    w: &mut Warp,
    exec: u32,
    d: usize,
    a: Opnd,
    b: Opnd,
    f: impl Fn(u64, u64) -> u64,
) {
    match (a, b) {
        (Opnd::Reg(ra), Opnd::Reg(rb)) => {
            let (ra, rb) = (ra as usize * 32, rb as usize * 32);
            let r = &mut w.regs;
            lanes!(exec, l, {
                r[d + l] = f(r[ra + l], r[rb + l]);
            });
        }
        (Opnd::Reg(ra), Opnd::Imm(vb)) => {
            let ra = ra as usize * 32;
            let r = &mut w.regs;
            lanes!(exec, l, {
                r[d + l] = f(r[ra + l], vb);
            });
        }
        _ => {
            lanes!(exec, l, {
                let v = f(ctx.get(w, a, l), ctx.get(w, b, l));
                w.regs[d + l] = v;
            });
        }
    }
}

/// `map2` with three operands.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn map3(
    ctx: &Ctx,
    w: &mut Warp,
    exec: u32,
    d: usize,
    a: Opnd,
    b: Opnd,
    c: Opnd,
    f: impl Fn(u64, u64, u64) -> u64,
) {
    match (a, b, c) {
        (Opnd::Reg(ra), Opnd::Reg(rb), Opnd::Reg(rc)) => {
            let (ra, rb, rc) = (ra as usize * 32, rb as usize * 32, rc as usize * 32);
            let r = &mut w.regs;
            lanes!(exec, l, {
                r[d + l] = f(r[ra + l], r[rb + l], r[rc + l]);
            });
        }
        _ => {
            lanes!(exec, l, {
                let v = f(ctx.get(w, a, l), ctx.get(w, b, l), ctx.get(w, c, l));
                w.regs[d + l] = v;
            });
        }
    }
}

/// Integer width class of a type for the fast paths: 32 or 64 bits, signed or not.
#[inline(always)]
fn int_class(t: Ty) -> Option<(u32, bool)> {
    match t {
        Ty::B32 | Ty::U32 => Some((32, false)),
        Ty::S32 => Some((32, true)),
        Ty::B64 | Ty::U64 => Some((64, false)),
        Ty::S64 => Some((64, true)),
        _ => None,
    }
}

/// Fast paths for the most common `Bin` operations; false if the generic path must run.
/// Each gives exactly `alu::bin`'s result.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn bin_fast(
    ctx: &Ctx,
    w: &mut Warp,
    exec: u32,
    op: BinOp,
    ty: Ty,
    d: usize,
    a: Opnd,
    b: Opnd,
    fm: FMod,
) -> bool {
    if ty == Ty::F32 {
        if fm.ftz || fm.sat || fm.directed() {
            return false;
        }
        let f = |x: u64| f32::from_bits(x as u32);
        match op {
            BinOp::Add => map2(ctx, w, exec, d, a, b, |x, y| (f(x) + f(y)).to_bits() as u64),
            BinOp::Sub => map2(ctx, w, exec, d, a, b, |x, y| (f(x) - f(y)).to_bits() as u64),
            BinOp::MulLo => map2(ctx, w, exec, d, a, b, |x, y| (f(x) * f(y)).to_bits() as u64),
            _ => return false,
        }
        return true;
    }
    let Some((bits, signed)) = int_class(ty) else {
        return false;
    };
    if fm.sat && signed {
        return false;
    }
    match (op, bits) {
        (BinOp::Add, 32) => map2(ctx, w, exec, d, a, b, |x, y| {
            (x as u32).wrapping_add(y as u32) as u64
        }),
        (BinOp::Add, _) => map2(ctx, w, exec, d, a, b, |x, y| x.wrapping_add(y)),
        (BinOp::Sub, 32) => map2(ctx, w, exec, d, a, b, |x, y| {
            (x as u32).wrapping_sub(y as u32) as u64
        }),
        (BinOp::Sub, _) => map2(ctx, w, exec, d, a, b, |x, y| x.wrapping_sub(y)),
        (BinOp::MulLo, 32) => map2(ctx, w, exec, d, a, b, |x, y| {
            (x as u32).wrapping_mul(y as u32) as u64
        }),
        (BinOp::MulLo, _) => map2(ctx, w, exec, d, a, b, |x, y| x.wrapping_mul(y)),
        (BinOp::MulWide, 32) if signed => map2(ctx, w, exec, d, a, b, |x, y| {
            (x as u32 as i32 as i64).wrapping_mul(y as u32 as i32 as i64) as u64
        }),
        (BinOp::MulWide, 32) => map2(ctx, w, exec, d, a, b, |x, y| {
            (x as u32 as u64).wrapping_mul(y as u32 as u64)
        }),
        (BinOp::Shl, 32) => map2(ctx, w, exec, d, a, b, |x, y| {
            let s = y as u32;
            if s >= 32 { 0 } else { ((x as u32) << s) as u64 }
        }),
        (BinOp::Shl, _) => map2(ctx, w, exec, d, a, b, |x, y| {
            let s = y as u32;
            if s >= 64 { 0 } else { x << s }
        }),
        _ => return false,
    }
    true
}

/// Like `map2`, for a comparison: writes the result to `d` and its negation to `d2`.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn map_pred(
    ctx: &Ctx,
    w: &mut Warp,
    exec: u32,
    d: usize,
    d2: Option<usize>,
    a: Opnd,
    b: Opnd,
    f: impl Fn(u64, u64) -> bool,
) {
    match d2 {
        None => map2(ctx, w, exec, d, a, b, |x, y| f(x, y) as u64),
        Some(d2) => {
            lanes!(exec, l, {
                let r = f(ctx.get(w, a, l), ctx.get(w, b, l));
                w.regs[d + l] = r as u64;
                w.regs[d2 + l] = (!r) as u64;
            });
        }
    }
}

/// Integer `setp` without a combining predicate, with operands mapped by `key` to values whose
/// order is the type's order; false for comparisons left to the generic path.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn setp_int<K: Ord>(
    ctx: &Ctx,
    w: &mut Warp,
    exec: u32,
    d: usize,
    d2: Option<usize>,
    a: Opnd,
    b: Opnd,
    cmp: Cmp,
    key: impl Fn(u64) -> K,
) -> bool {
    match cmp {
        Cmp::Eq | Cmp::Equ => map_pred(ctx, w, exec, d, d2, a, b, |x, y| key(x) == key(y)),
        Cmp::Ne | Cmp::Neu => map_pred(ctx, w, exec, d, d2, a, b, |x, y| key(x) != key(y)),
        Cmp::Lt | Cmp::Ltu => map_pred(ctx, w, exec, d, d2, a, b, |x, y| key(x) < key(y)),
        Cmp::Le | Cmp::Leu => map_pred(ctx, w, exec, d, d2, a, b, |x, y| key(x) <= key(y)),
        Cmp::Gt | Cmp::Gtu => map_pred(ctx, w, exec, d, d2, a, b, |x, y| key(x) > key(y)),
        Cmp::Ge | Cmp::Geu => map_pred(ctx, w, exec, d, d2, a, b, |x, y| key(x) >= key(y)),
        Cmp::Num | Cmp::Nan => return false,
    }
    true
}

impl Warp {
    fn flush(&mut self) {
        lanes!(self.active, l, {
            self.lane_pc[l] = self.pc;
        });
    }

    /// Picks the lanes to run next: those at the lowest PC (reconvergence at join points), or the
    /// favored lane's group while a spinning group yields.
    fn regroup(&mut self) {
        self.flush();
        let runnable = self.live & !self.blocked;
        if runnable == 0 {
            self.active = 0;
            self.favored = None;
            return;
        }
        let pc = match self.favored {
            Some(f) if runnable & (1 << f) != 0 => self.lane_pc[f as usize],
            _ => {
                self.favored = None;
                let mut best = u32::MAX;
                lanes!(runnable, l, {
                    best = best.min(self.lane_pc[l]);
                });
                best
            }
        };
        let mut act = 0u32;
        lanes!(runnable, l, {
            if self.lane_pc[l] == pc {
                act |= 1 << l;
            }
        });
        self.pc = pc;
        self.active = act;
        if act == runnable {
            self.spin = 0;
            self.favored = None;
        }
    }

    #[inline]
    fn runnable(&self) -> u32 {
        self.live & !self.blocked
    }

    #[inline]
    fn advance(&mut self) {
        self.pc += 1;
        if self.active != self.runnable() {
            self.regroup();
        }
    }
}

struct Ctx<'a> {
    m: &'a Module,
    allocs: &'a mut Vec<Allocation>,
    heap: &'a mut Heap,
    opts: RunOptions,
    grid: [u32; 3],
    block: [u32; 3],
    tpb: u32,
    wpb: u32,
    kparams: Vec<u8>,
    /// Per resident slot.
    shared: Vec<Vec<u8>>,
    /// What shared memory holds when a block starts.
    shared_init: Vec<u8>,
    /// Per resident slot, `shared_words` u64s: one bit per byte of shared memory, set once a
    /// thread of the block wrote it (initcheck).
    shared_written: Vec<u64>,
    shared_words: usize,
    shared_size: u32,
    dyn_base: u32,
    reserved_base: u32,
    dyn_size: u32,
    /// Per resident thread, `local_size` bytes each.
    local: Vec<u8>,
    local_size: u32,
    race: Option<Race>,
    findings: Collector,
    /// Index into `allocs` of the last global access, tried first.
    last_alloc: usize,
    clock: u64,
    thread_instrs: u64,
    /// Counts progress events for the watchdog: memory changed by a store or atomic, a barrier
    /// completed, a thread exited or started.
    progress: u64,
    /// A failed assert or a stack overflow ended the launch.
    aborted: bool,
    /// A thread reached an instruction the emulator does not run: the launch stops, and this
    /// is its error.
    refusal: Option<EmuError>,
    printf: Vec<PrintfRecord>,
    printf_bytes: usize,
    printf_dropped: u64,
    /// Set by a strong access or atomic on global memory, where blocks hand data to each other:
    /// the adversarial schedule switches warps there.
    touched_global_sync: bool,
    /// The recorder of a traced launch ([`Emulator::launch_traced`]); `None` otherwise.
    trace: Option<Box<Recorder>>,
    /// Shared-memory bank conflicts so far, when [`RunOptions::bank_conflicts`] asks for them.
    banks: Option<Box<banks::Tally>>,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Tgt {
    G(usize, usize),
    S(usize),
    L(usize),
    Bad,
}

#[inline(always)]
fn rd_le(d: &[u8], off: usize, size: usize) -> u64 {
    match (size, d.get(off..off.saturating_add(size))) {
        (4, Some(s)) => return u32::from_le_bytes(s.try_into().unwrap_or_default()) as u64,
        (8, Some(s)) => return u64::from_le_bytes(s.try_into().unwrap_or_default()),
        _ => {}
    }
    let mut b = [0u8; 8];
    if let Some(s) = d.get(off..off.saturating_add(size)) {
        b[..size].copy_from_slice(s);
    }
    u64::from_le_bytes(b)
}

#[inline(always)]
fn wr_le(d: &mut [u8], off: usize, size: usize, v: u64) {
    if let Some(s) = d.get_mut(off..off.saturating_add(size)) {
        s.copy_from_slice(&v.to_le_bytes()[..size]);
    }
}

/// The key that makes findings about one object one finding: a heap block's `malloc` call site
/// (every thread's block from one call is "the same" object), otherwise the allocation itself.
fn heap_key(a: &Allocation) -> u64 {
    match &a.heap {
        Some(h) => (1 << 61) | h.site as u64,
        None => a.base,
    }
}

fn split3(i: u32, d: [u32; 3]) -> [u32; 3] {
    [i % d[0], (i / d[0]) % d[1], i / (d[0] * d[1])]
}

fn split3_64(i: u64, d: [u32; 3]) -> [u32; 3] {
    let (x, y) = (d[0] as u64, d[1] as u64);
    [(i % x) as u32, ((i / x) % y) as u32, (i / (x * y)) as u32]
}

impl Ctx<'_> {
    fn thread_ref(&self, gid: u64) -> ThreadRef {
        let tpb = self.tpb as u64;
        ThreadRef {
            block: split3_64(gid / tpb, self.grid),
            thread: split3((gid % tpb) as u32, self.block),
        }
    }

    fn src(&self, pc: u32) -> SourceLoc {
        let (loc, ptx_line) = match self.m.code.get(pc as usize) {
            Some(i) => (self.m.locs.get(i.loc as usize), i.ptx_line),
            None => (None, 0),
        };
        match loc {
            Some(l) if l.line != 0 => SourceLoc {
                file: self.m.file_name(l.file).to_string(),
                line: l.line,
                inlined_at: l.inlined_at.map(|x| x.1),
                inlined_into: l
                    .outermost
                    .filter(|&(file, _)| file != l.file)
                    .map(|(file, line)| (self.m.file_name(file).to_string(), line)),
                ptx_line,
            },
            _ => SourceLoc {
                file: String::new(),
                line: 0,
                inlined_at: None,
                inlined_into: None,
                ptx_line,
            },
        }
    }

    fn line_of(&self, pc: u32) -> u32 {
        self.m
            .code
            .get(pc as usize)
            .and_then(|i| self.m.locs.get(i.loc as usize))
            .map(|l| l.line)
            .unwrap_or(0)
    }

    #[inline(always)]
    fn sreg(&self, w: &Warp, s: Sreg, lane: usize) -> u64 {
        let t = w.first + lane as u32;
        match s {
            Sreg::Tid(0) if self.block[1] == 1 && self.block[2] == 1 => t as u64,
            Sreg::Ctaid(0) if self.grid[1] == 1 && self.grid[2] == 1 => w.block,
            Sreg::Tid(d) => split3(t, self.block)[d as usize] as u64,
            Sreg::Ntid(d) => self.block[d as usize] as u64,
            Sreg::Ctaid(d) => split3_64(w.block, self.grid)[d as usize] as u64,
            Sreg::Nctaid(d) => self.grid[d as usize] as u64,
            Sreg::LaneId => lane as u64,
            Sreg::WarpId => (w.first / 32) as u64,
            Sreg::NWarpId => self.wpb as u64,
            Sreg::Clock => self.clock & 0xffff_ffff,
            Sreg::Clock64 => self.clock,
            Sreg::ClockHi => self.clock >> 32,
            Sreg::LaneMaskEq => 1u64 << lane,
            Sreg::LaneMaskLt => (1u64 << lane) - 1,
            Sreg::LaneMaskLe => (2u64 << lane) - 1,
            Sreg::LaneMaskGt => !((2u64 << lane) - 1) & 0xffff_ffff,
            Sreg::LaneMaskGe => !((1u64 << lane) - 1) & 0xffff_ffff,
            Sreg::DynSmem => self.dyn_size as u64,
            Sreg::TotalSmem => self.shared_size as u64,
            Sreg::DynSmemBase => self.dyn_base as u64,
            Sreg::ReservedSmem(offset) => u64::from(self.reserved_base) + u64::from(offset),
            Sreg::Zero => 0,
        }
    }

    #[inline(always)]
    fn get(&self, w: &Warp, o: Opnd, lane: usize) -> u64 {
        match o {
            Opnd::Reg(r) => w.regs[r as usize * 32 + lane],
            Opnd::Imm(v) => v,
            Opnd::Sreg(s) => self.sreg(w, s, lane),
        }
    }

    #[inline(always)]
    fn addr(&self, w: &Warp, a: &Addr, lane: usize) -> u64 {
        match *a {
            Addr::Reg { base, off } => self.get(w, base, lane).wrapping_add(off as u64),
            Addr::KParam(o) | Addr::TParam(o) => o as u64,
        }
    }

    /// Global linear thread id.
    fn gid(&self, w: &Warp, lane: usize) -> u64 {
        w.block * self.tpb as u64 + (w.first + lane as u32) as u64
    }

    /// Index of the thread among the resident blocks' threads.
    fn rt(&self, w: &Warp, lane: usize) -> u32 {
        w.slot * self.tpb + w.first + lane as u32
    }

    fn who(&self, w: &Warp, lane: usize) -> race::Who {
        race::Who {
            tid: self.gid(w, lane),
            slot: w.slot,
            rt: self.rt(w, lane),
            warp: w.gw,
        }
    }

    /// The warp's index in a trace: `block * warps_per_block + warp` (traced launches have at
    /// most `u32::MAX` warps).
    fn trace_warp(&self, w: &Warp) -> u32 {
        (w.block * self.wpb as u64) as u32 + w.first / 32
    }

    /// Adds one warp access to the bank-conflict tally: the shared-memory offsets of the lanes
    /// in `exec` that access shared memory (a generic address may point elsewhere).
    #[allow(clippy::too_many_arguments)]
    fn count_banks(
        &mut self,
        w: &Warp,
        exec: u32,
        space: Space,
        addr: &Addr,
        bytes: u32,
        pc: u32,
        write: bool,
    ) {
        if !matches!(space, Space::Shared | Space::Generic) {
            return;
        }
        let mut offsets = [None; 32];
        let mut any = false;
        lanes!(exec, l, {
            let a = self.addr(w, addr, l);
            let offset = if (SHARED_WIN..SHARED_WIN + WIN).contains(&a) {
                Some(a - SHARED_WIN)
            } else if space == Space::Shared {
                Some(a)
            } else {
                None
            };
            if let Some(offset) = offset {
                offsets[l] = u32::try_from(offset).ok();
                any = true;
            }
        });
        if any && let Some(tally) = self.banks.as_deref_mut() {
            tally.record(pc, write, &offsets, bytes);
        }
    }

    /// [`Ctx::resolve`] for the common case, an aligned in-bounds access to shared memory or to
    /// the global allocation of the previous access; anything else takes the full path.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    fn resolve(
        &mut self,
        w: &Warp,
        lane: usize,
        space: Space,
        addr: u64,
        size: u32,
        align: u32,
        pc: u32,
        op: AccessOp,
    ) -> Tgt {
        if addr.is_multiple_of(align.max(1) as u64) {
            match space {
                Space::Shared => {
                    let off = if addr >= SHARED_WIN {
                        addr - SHARED_WIN
                    } else {
                        addr
                    };
                    if off.saturating_add(size as u64) <= self.shared_size as u64 {
                        return Tgt::S(off as usize);
                    }
                }
                Space::Global => {
                    if let Some(last) = self.allocs.get(self.last_alloc)
                        && addr >= last.base
                        && addr.saturating_add(size as u64) <= last.base + last.data.len() as u64
                    {
                        return Tgt::G(self.last_alloc, (addr - last.base) as usize);
                    }
                }
                _ => {}
            }
        }
        self.resolve_full(w, lane, space, addr, size, align, pc, op)
    }

    /// Maps an address to memory, reporting out-of-bounds and misaligned accesses.
    #[allow(clippy::too_many_arguments)]
    fn resolve_full(
        &mut self,
        w: &Warp,
        lane: usize,
        space: Space,
        addr: u64,
        size: u32,
        align: u32,
        pc: u32,
        op: AccessOp,
    ) -> Tgt {
        let (sp, off) = match space {
            Space::Shared => (
                report::Space::Shared,
                if (SHARED_WIN..SHARED_WIN + WIN).contains(&addr) {
                    addr - SHARED_WIN
                } else {
                    addr
                },
            ),
            Space::Local => (
                report::Space::Local,
                if (LOCAL_WIN..LOCAL_WIN + WIN).contains(&addr) {
                    addr - LOCAL_WIN
                } else {
                    addr
                },
            ),
            Space::Generic if (SHARED_WIN..SHARED_WIN + WIN).contains(&addr) => {
                (report::Space::Shared, addr - SHARED_WIN)
            }
            Space::Generic if (LOCAL_WIN..LOCAL_WIN + WIN).contains(&addr) => {
                (report::Space::Local, addr - LOCAL_WIN)
            }
            _ => (report::Space::Global, addr),
        };
        if self.opts.memcheck && align > 1 && off % align as u64 != 0 {
            let gid = self.gid(w, lane);
            let loc = self.mem_location(sp, off, addr, size);
            let key = (
                FindingKind::Misaligned { space: sp },
                self.line_of(pc),
                0,
                loc.1,
            );
            let (thread, at) = (self.thread_ref(gid), self.src(pc));
            let new = self.findings.add(key, || Finding {
                kind: FindingKind::Misaligned { space: sp },
                count: 1,
                location: Some(loc.0),
                accesses: vec![Access { op, thread, at }],
                threads: vec![],
                why: format!("a {size}-byte access must be {align}-byte aligned (address {addr:#x}); hardware faults here"),
            });
            self.link_finding(new, None, lane);
        }
        let tgt = match sp {
            report::Space::Global => {
                // Neighbouring lanes almost always hit the allocation the last access hit.
                let last = self.allocs.get(self.last_alloc);
                if let Some(last) = last
                    && off >= last.base
                    && off.saturating_add(size as u64) <= last.base + last.data.len() as u64
                {
                    Tgt::G(self.last_alloc, (off - last.base) as usize)
                } else {
                    match find_alloc(self.allocs, off, size as u64) {
                        Some(i) => {
                            self.last_alloc = i;
                            Tgt::G(i, (off - self.allocs[i].base) as usize)
                        }
                        None => Tgt::Bad,
                    }
                }
            }
            report::Space::Shared => {
                if off.saturating_add(size as u64) <= self.shared_size as u64 {
                    Tgt::S(off as usize)
                } else {
                    Tgt::Bad
                }
            }
            report::Space::Local => {
                if off.saturating_add(size as u64) <= self.local_size as u64 {
                    Tgt::L(self.rt(w, lane) as usize * self.local_size as usize + off as usize)
                } else {
                    Tgt::Bad
                }
            }
        };
        if let Tgt::Bad = tgt
            && sp == report::Space::Global
            && let Some(i) = self.freed_block(off)
        {
            self.report_use_after_free(w, lane, i, off, size, pc, op);
            return tgt;
        }
        if let Tgt::Bad = tgt {
            let gid = self.gid(w, lane);
            let loc = self.mem_location(sp, off, addr, size);
            let key = (
                FindingKind::OutOfBounds { space: sp },
                self.line_of(pc),
                0,
                loc.1,
            );
            let (thread, at) = (self.thread_ref(gid), self.src(pc));
            let what = if matches!(op, AccessOp::Read | AccessOp::AtomicRead) {
                "reads give 0"
            } else {
                "the write was dropped"
            };
            let new = self.findings.add(key, || Finding {
                kind: FindingKind::OutOfBounds { space: sp },
                count: 1,
                location: Some(loc.0),
                accesses: vec![Access { op, thread, at }],
                threads: vec![],
                why: format!(
                    "{size}-byte access at {addr:#x} is outside every {sp} allocation; {what}"
                ),
            });
            self.link_finding(new, None, lane);
        }
        tgt
    }

    /// Label and element index for an address, plus a key naming the object for deduplication.
    fn mem_location(
        &self,
        sp: report::Space,
        off: u64,
        addr: u64,
        size: u32,
    ) -> (MemLocation, u64) {
        let size = size.max(1) as i64;
        match sp {
            report::Space::Global => {
                let i = self.allocs.partition_point(|a| a.base <= off);
                let near = if i > 0 { self.allocs.get(i - 1) } else { None };
                match near {
                    Some(a) if off < a.base.saturating_add(a.data.len() as u64 + GAP / 2) => {
                        let rel = (off - a.base) as i64;
                        let len = a.data.len() as u64;
                        let note = if off.saturating_add(size as u64) > a.base + len {
                            Some(format!(
                                "{} past the end of {}, which has {}",
                                bytes(off.saturating_add(size as u64) - (a.base + len)),
                                a.label,
                                bytes(len)
                            ))
                        } else {
                            None
                        };
                        (
                            MemLocation {
                                space: sp,
                                label: a.label.clone(),
                                index: rel / size,
                                address: addr,
                                note,
                            },
                            heap_key(a),
                        )
                    }
                    _ => {
                        let nxt = self.allocs.get(i).filter(|a| a.base - off < GAP / 2);
                        match nxt {
                            Some(a) => {
                                let rel = off as i64 - a.base as i64;
                                (
                                    MemLocation {
                                        space: sp,
                                        label: a.label.clone(),
                                        index: rel.div_euclid(size),
                                        address: addr,
                                        note: Some(format!(
                                            "{} before the start of {}",
                                            bytes(rel.unsigned_abs()),
                                            a.label
                                        )),
                                    },
                                    heap_key(a),
                                )
                            }
                            None => (
                                MemLocation {
                                    space: sp,
                                    label: "<no allocation>".into(),
                                    index: 0,
                                    address: addr,
                                    note: Some(format!("address {addr:#x}")),
                                },
                                0,
                            ),
                        }
                    }
                }
            }
            report::Space::Shared => {
                // The variable at or below the offset; past its end, say so.
                let var = self
                    .m
                    .shared
                    .iter()
                    .filter(|v| (v.offset as u64) <= off)
                    .max_by_key(|v| v.offset)
                    .map(|v| (v.name.clone(), v.offset as u64, v.size as u64));
                // At or past the dynamic area of a kernel that declares `extern __shared__`:
                // that array, even when the launch gave it no bytes (the usual slip).
                let in_dynamic = off >= self.dyn_base as u64
                    && (self.dyn_size > 0 || !self.m.dyn_names.is_empty());
                let dynamic = in_dynamic.then(|| {
                    let name = match self.m.dyn_names.as_slice() {
                        [] => "extern __shared__".to_string(),
                        names => names.join(" / "),
                    };
                    (name, self.dyn_base as u64, self.dyn_size as u64)
                });
                let (label, base, len) = dynamic
                    .clone()
                    .or(var)
                    .unwrap_or_else(|| ("shared".to_string(), 0, self.shared_size as u64));
                let end = off.saturating_add(size as u64);
                let note = match dynamic {
                    Some(_) if len == 0 => Some(format!(
                        "{label} is dynamic shared memory (extern __shared__), and the launch gave it no bytes"
                    )),
                    Some(_) if end > base + len => Some(format!(
                        "{} past the end of {label}, the dynamic shared memory, which the launch sized at {}",
                        bytes(end - (base + len)),
                        bytes(len)
                    )),
                    _ if end > base + len => Some(format!(
                        "{} past the end of {label}, which has {}",
                        bytes(end - (base + len)),
                        bytes(len)
                    )),
                    _ => None,
                };
                (
                    MemLocation {
                        space: sp,
                        label,
                        index: (off - base) as i64 / size,
                        address: addr,
                        note,
                    },
                    (1 << 63) | base,
                )
            }
            report::Space::Local => (
                MemLocation {
                    space: sp,
                    label: "local".into(),
                    index: off as i64 / size,
                    address: addr,
                    note: Some(format!(
                        "the thread has {} bytes of local memory",
                        self.local_size
                    )),
                },
                (1 << 62) | off,
            ),
        }
    }

    /// Race check for an access to `size` bytes at `tgt` (global or shared).
    #[inline(always)]
    fn race_check(
        &mut self,
        w: &Warp,
        lane: usize,
        tgt: Tgt,
        size: u32,
        kind: race::Kind,
        pc: u32,
    ) {
        if self.race.is_some() {
            self.race_check_shadow(w, lane, tgt, size, kind, pc);
        }
    }

    fn race_check_shadow(
        &mut self,
        w: &Warp,
        lane: usize,
        tgt: Tgt,
        size: u32,
        kind: race::Kind,
        pc: u32,
    ) {
        let (region, off) = match tgt {
            Tgt::G(i, off) => (
                race::Region::Global {
                    index: i,
                    words: self.allocs[i].data.len().div_ceil(4),
                },
                off,
            ),
            Tgt::S(off) => (
                race::Region::Shared {
                    slot: w.slot,
                    block: w.block,
                },
                off,
            ),
            _ => return,
        };
        let who = self.who(w, lane);
        let end = off + size as usize;
        let mut o = off;
        while o < end {
            let word = o / 4;
            let wend = ((word + 1) * 4).min(end);
            let mut mask = 0u8;
            for b in o..wend {
                mask |= 1 << (b % 4);
            }
            let hit = self
                .race
                .as_mut()
                .and_then(|r| r.access(region, word, mask, size, &who, kind, pc));
            if let Some(hit) = hit {
                self.report_race(w, lane, tgt, o, size, kind, pc, hit);
            }
            o = wend;
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn report_race(
        &mut self,
        w: &Warp,
        lane: usize,
        tgt: Tgt,
        off: usize,
        size: u32,
        kind: race::Kind,
        pc: u32,
        hit: race::Hit,
    ) {
        let (sp, addr_off, addr) = match tgt {
            Tgt::G(i, _) => (
                report::Space::Global,
                self.allocs[i].base + off as u64,
                self.allocs[i].base + off as u64,
            ),
            _ => (report::Space::Shared, off as u64, off as u64),
        };
        let (loc, obj) = self.mem_location(sp, addr_off, addr, size);
        let fk = FindingKind::Race {
            hazard: hit.hazard,
            space: sp,
        };
        let key = (fk, self.line_of(hit.prev.pc), self.line_of(pc), obj);
        let prev_op = match (hit.hazard, hit.prev.strong) {
            (report::Hazard::WriteAfterRead, false) => AccessOp::Read,
            (_, false) => AccessOp::Write,
            (_, true) => AccessOp::Atomic,
        };
        let cur_op = match kind {
            race::Kind::Read => AccessOp::Read,
            race::Kind::Write => AccessOp::Write,
            race::Kind::StrongRead => AccessOp::AtomicRead,
            race::Kind::StrongWrite => AccessOp::AtomicWrite,
            race::Kind::Rmw => AccessOp::Atomic,
        };
        let first = Access {
            op: prev_op,
            thread: self.thread_ref(hit.prev.tid),
            at: self.src(hit.prev.pc),
        };
        let second = Access {
            op: cur_op,
            thread: self.thread_ref(self.gid(w, lane)),
            at: self.src(pc),
        };
        let tpb = self.tpb as u64;
        let same_block = hit.prev.tid / tpb == self.gid(w, lane) / tpb;
        let why = if sp == report::Space::Shared || same_block {
            "no __syncthreads(), atomic or fence orders them".to_string()
        } else {
            "different blocks, and no atomic/fence hand-off orders them (__syncthreads() only orders one block)".to_string()
        };
        let new = self.findings.add(key, || Finding {
            kind: fk,
            count: 1,
            location: Some(loc),
            accesses: vec![first, second],
            threads: vec![],
            why,
        });
        if new.is_some() && self.trace.is_some() {
            let earlier = self.earlier_access(w, tgt, off, hit.prev);
            self.link_finding(new, Some(earlier), lane);
        }
    }

    /// Records that finding `new` (when it is new) was seen at the current step by `lane`, after
    /// the access `earlier` (a race's first access) when there is one.
    fn link_finding(
        &mut self,
        new: Option<usize>,
        earlier: Option<Option<EventLane>>,
        lane: usize,
    ) {
        let (Some(index), Some(t)) = (new, self.trace.as_deref_mut()) else {
            return;
        };
        let now = t.current().map(|event| EventLane {
            event,
            lane: lane as u8,
        });
        let events = match earlier {
            Some(first) => vec![first, now],
            None => vec![now],
        };
        t.finding(index, events);
    }

    /// The step in which a race's earlier access (`prev`, to the word at byte `off` of `tgt`'s
    /// memory) happened.
    fn earlier_access(&self, w: &Warp, tgt: Tgt, off: usize, prev: race::Acc) -> Option<EventLane> {
        let t = self.trace.as_deref()?;
        let (array, offset) = match tgt {
            Tgt::G(i, _) => (t.global_array(i)?, off as u64),
            Tgt::S(_) => t.shared_array(w.block as u32, off as u64)?,
            _ => return None,
        };
        let tpb = self.tpb as u64;
        let local = (prev.tid % tpb) as u32;
        let warp = ((prev.tid / tpb) * self.wpb as u64) as u32 + local / 32;
        let lane = (local % 32) as u8;
        t.find_access(warp, lane, prev.pc, array, offset / 4)
            .map(|event| EventLane { event, lane })
    }

    /// Records one lane's access in the current step of a traced launch; `values` is the value
    /// read or written, and for an atomic the value after it.
    #[allow(clippy::too_many_arguments)]
    fn trace_access(
        &mut self,
        w: &Warp,
        lane: usize,
        tgt: Tgt,
        ty: Ty,
        values: (u64, Option<u64>),
        op: TraceOp,
        strong: bool,
        atomic: Option<&'static str>,
    ) {
        let Some(t) = self.trace.as_deref_mut() else {
            return;
        };
        let (space, found) = match tgt {
            Tgt::G(i, off) => (
                report::Space::Global,
                t.global_array(i).map(|a| (a, off as u64)),
            ),
            Tgt::S(off) => (
                report::Space::Shared,
                t.shared_array(w.block as u32, off as u64),
            ),
            Tgt::L(_) | Tgt::Bad => return,
        };
        let Some((array, offset)) = found else {
            return;
        };
        let access = LaneAccess {
            lane: lane as u8,
            array,
            offset,
            size: ty.bytes() as u8,
            value: values.0,
            new: values.1,
        };
        t.access(op, strong, atomic, space, ty.name(), access);
    }

    /// initcheck for a read of `size` bytes at `tgt`.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    fn init_read(&mut self, w: &Warp, lane: usize, tgt: Tgt, size: u32, pc: u32, op: AccessOp) {
        if !self.opts.initcheck {
            return;
        }
        let written = match tgt {
            Tgt::S(off) => {
                let at = w.slot as usize * self.shared_words;
                all_bits(
                    &self.shared_written[at..at + self.shared_words],
                    off,
                    size as usize,
                )
            }
            Tgt::G(i, off) => match &self.allocs[i].written {
                None => true,
                Some(bits) => all_bits(bits, off, size as usize),
            },
            _ => true,
        };
        if !written {
            self.report_uninit(w, lane, tgt, size, pc, op);
        }
    }

    /// Marks `size` bytes at `tgt` written. Global memory is marked even with initcheck off, so
    /// that a later launch with it on knows what this one wrote.
    #[inline(always)]
    fn init_write(&mut self, w: &Warp, tgt: Tgt, size: u32) {
        match tgt {
            Tgt::S(off) if self.opts.initcheck => {
                let at = w.slot as usize * self.shared_words;
                mark_bits_fast(
                    &mut self.shared_written[at..at + self.shared_words],
                    off,
                    size as usize,
                );
            }
            Tgt::G(i, off) => {
                if let Some(bits) = self.allocs[i].written.as_mut() {
                    mark_bits_fast(bits, off, size as usize);
                }
            }
            _ => {}
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn report_uninit(&mut self, w: &Warp, lane: usize, tgt: Tgt, size: u32, pc: u32, op: AccessOp) {
        let (sp, addr) = match tgt {
            Tgt::G(i, off) => (report::Space::Global, self.allocs[i].base + off as u64),
            Tgt::S(off) => (report::Space::Shared, off as u64),
            _ => return,
        };
        let (loc, obj) = self.mem_location(sp, addr, addr, size);
        let kind = FindingKind::UninitializedRead { space: sp };
        let key = (kind, self.line_of(pc), 0, obj);
        let access = Access {
            op,
            thread: self.thread_ref(self.gid(w, lane)),
            at: self.src(pc),
        };
        let why = if sp == report::Space::Shared {
            "no thread of the block wrote these bytes before this read: shared memory starts as garbage"
        } else {
            "the memory was allocated uninitialized and nothing wrote these bytes before this read"
        };
        let new = self.findings.add(key, || Finding {
            kind,
            count: 1,
            location: Some(loc),
            accesses: vec![access],
            threads: vec![],
            why: why.into(),
        });
        self.link_finding(new, None, lane);
    }

    /// Loads `size` bytes (one element) through a resolved target; `slot` is the accessing
    /// block's.
    #[inline(always)]
    fn read_tgt(&self, tgt: Tgt, size: usize, slot: u32) -> u64 {
        match tgt {
            Tgt::G(i, off) => rd_le(&self.allocs[i].data, off, size),
            Tgt::S(off) => rd_le(&self.shared[slot as usize], off, size),
            Tgt::L(off) => rd_le(&self.local, off, size),
            Tgt::Bad => 0,
        }
    }

    #[inline(always)]
    fn write_tgt(&mut self, tgt: Tgt, size: usize, slot: u32, v: u64) {
        match tgt {
            Tgt::G(i, off) => wr_le(&mut self.allocs[i].data, off, size, v),
            Tgt::S(off) => wr_le(&mut self.shared[slot as usize], off, size, v),
            Tgt::L(off) => wr_le(&mut self.local, off, size, v),
            Tgt::Bad => {}
        }
    }

    fn sync_region(&self, tgt: Tgt, w: &Warp) -> Option<(race::Region, u64)> {
        match tgt {
            Tgt::G(i, off) => Some((
                race::Region::Global {
                    index: i,
                    words: self.allocs[i].data.len().div_ceil(4),
                },
                (off / 4) as u64,
            )),
            Tgt::S(off) => Some((
                race::Region::Shared {
                    slot: w.slot,
                    block: w.block,
                },
                (off / 4) as u64,
            )),
            _ => None,
        }
    }
}

/// synccheck for warp-synchronous calls.
impl Ctx<'_> {
    /// The masks the active lanes pass to a warp-synchronous call: reports lanes outside their
    /// own mask and lanes whose masks overlap without being equal, and returns the lanes to wait
    /// for (the union of the masks and the callers themselves, since hardware leaves anything
    /// else undefined) with each lane's own mask. Disjoint masks are independent groups, as
    /// two `thread_block_tile<16>`s of one warp each syncing their own half.
    fn warp_masks(&mut self, w: &Warp, mask: Opnd, pc: u32, op: &Op) -> (u32, [u32; 32]) {
        let mut union = 0u32;
        let mut outside = 0u32;
        let mut lane_masks = [0u32; 32];
        lanes!(w.active, l, {
            let mk = self.get(w, mask, l) as u32;
            lane_masks[l] = mk;
            union |= mk;
            if mk & (1 << l) == 0 {
                outside |= 1 << l;
            }
        });
        if self.opts.synccheck && outside != 0 {
            let name = collective_name(op);
            let lane = outside.trailing_zeros() as usize;
            let mk = lane_masks[lane];
            let group = ThreadGroup {
                at: self.src(pc),
                threads: outside.count_ones() as u64,
                example: self.thread_ref(self.gid(w, lane)),
                state: format!("called {name}({mk:#010x}) without their own lane in it"),
            };
            let kind = FindingKind::WarpSync {
                problem: WarpSyncProblem::LaneNotInMask,
            };
            self.findings.add((kind, self.line_of(pc), 0, 0), || Finding {
                kind,
                count: 1,
                location: None,
                accesses: vec![],
                threads: vec![group],
                why: format!(
                    "a lane that calls {name} must have its own bit set in the mask; CUDA leaves anything else undefined"
                ),
            });
        }
        let mut groups: Vec<(u32, u32, u32)> = Vec::new();
        lanes!(w.active, l, {
            let mk = lane_masks[l];
            match groups.iter_mut().find(|g| g.1 == mk) {
                Some(g) => g.2 |= 1 << l,
                None => groups.push((pc, mk, 1 << l)),
            }
        });
        let overlap = groups
            .iter()
            .enumerate()
            .any(|(i, a)| groups[i + 1..].iter().any(|b| masks_conflict(a.1, b.1)));
        if self.opts.synccheck && overlap {
            self.report_mask_groups(w, pc, op, &groups);
        }
        (union | w.active, lane_masks)
    }

    /// Lanes `lanes` call at `pc` with `mask` and meet `others`, which waited with another mask.
    fn report_mask_mismatch(&mut self, w: &Warp, pc: u32, lanes: u32, mask: u32, others: u32) {
        let Some(op) = self.m.code.get(pc as usize).map(|i| &i.op) else {
            return;
        };
        let mut groups = vec![(pc, mask, lanes)];
        lanes!(others, l, {
            let (at, mk) = (w.lane_pc[l], w.wsync_mask[l]);
            match groups.iter_mut().find(|g| g.0 == at && g.1 == mk) {
                Some(g) => g.2 |= 1 << l,
                None => groups.push((at, mk, 1 << l)),
            }
        });
        self.report_mask_groups(w, pc, op, &groups);
    }

    /// One `MaskMismatch` finding: each group is (pc, mask, lanes).
    fn report_mask_groups(&mut self, w: &Warp, pc: u32, op: &Op, groups: &[(u32, u32, u32)]) {
        if !self.opts.synccheck {
            return;
        }
        let name = collective_name(op);
        let threads: Vec<ThreadGroup> = groups
            .iter()
            .map(|&(at, mk, lanes)| ThreadGroup {
                at: self.src(at),
                threads: lanes.count_ones() as u64,
                example: self.thread_ref(self.gid(w, lanes.trailing_zeros() as usize)),
                state: format!("called {name}({mk:#010x})"),
            })
            .collect();
        let kind = FindingKind::WarpSync {
            problem: WarpSyncProblem::MaskMismatch,
        };
        self.findings.add((kind, self.line_of(pc), 0, 0), || Finding {
            kind,
            count: 1,
            location: None,
            accesses: vec![],
            threads,
            why: format!(
                "lanes that meet in {name} must all pass the same mask; CUDA leaves different masks undefined"
            ),
        });
    }
}

/// Device runtime calls (`printf`, `assert`, `malloc`, `free`) and recursive-call frames.
/// One lane's `__assertfail` arguments: the condition's text, where it is, and in which function.
struct FailedAssert {
    lane: usize,
    message: Vec<u8>,
    file: Vec<u8>,
    line: u32,
    function: Vec<u8>,
}

impl Ctx<'_> {
    /// The bytes from a generic address to the end of whatever holds it (empty if nothing does).
    fn generic_bytes(&self, w: &Warp, lane: usize, addr: u64) -> &[u8] {
        if (SHARED_WIN..SHARED_WIN + WIN).contains(&addr) {
            let block = &self.shared[w.slot as usize];
            return block.get((addr - SHARED_WIN) as usize..).unwrap_or(&[]);
        }
        if (LOCAL_WIN..LOCAL_WIN + WIN).contains(&addr) {
            let off = addr - LOCAL_WIN;
            let size = self.local_size as usize;
            if off >= size as u64 {
                return &[];
            }
            let base = self.rt(w, lane) as usize * size;
            return self
                .local
                .get(base + off as usize..base + size)
                .unwrap_or(&[]);
        }
        let i = self.allocs.partition_point(|a| a.base <= addr);
        match i.checked_sub(1).and_then(|i| self.allocs.get(i)) {
            Some(a) => a.data.get((addr - a.base) as usize..).unwrap_or(&[]),
            None => &[],
        }
    }

    /// A NUL-terminated string at a generic address (at most 64 KiB of it).
    fn cstr(&self, w: &Warp, lane: usize, addr: u64) -> Vec<u8> {
        let bytes = self.generic_bytes(w, lane, addr);
        let bytes = &bytes[..bytes.len().min(1 << 16)];
        let end = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
        bytes[..end].to_vec()
    }

    /// `vprintf(format, args)` for one thread: formats, keeps the output if the buffer has room,
    /// and returns what CUDA's `printf` returns (arguments consumed, -1 for a NULL format).
    fn printf(&mut self, w: &Warp, lane: usize, format: u64, args: u64) -> i32 {
        if format == 0 {
            return -1;
        }
        let fmt = self.cstr(w, lane, format);
        let (out, consumed) = printf::format(
            &fmt,
            |off, size| {
                rd_le(
                    self.generic_bytes(w, lane, args.wrapping_add(off as u64)),
                    0,
                    size,
                )
            },
            |addr| self.cstr(w, lane, addr),
        );
        let thread = self.thread_ref(self.gid(w, lane));
        self.emit(thread, String::from_utf8_lossy(&out).into_owned());
        consumed
    }

    fn emit(&mut self, thread: ThreadRef, text: String) {
        if self.printf_bytes + text.len() > self.opts.printf_buffer_bytes {
            self.printf_dropped += 1;
            return;
        }
        self.printf_bytes += text.len();
        self.printf.push(PrintfRecord { thread, text });
    }

    /// `__assertfail` for the lanes of one warp: each prints the GPU's message, the finding
    /// names the condition, and the launch ends, as a GPU's does.
    fn assert_failed(&mut self, w: &Warp, pc: u32, lanes_mask: u32, messages: Vec<FailedAssert>) {
        let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
        let mut first = None;
        for FailedAssert {
            lane,
            message,
            file,
            line,
            function,
        } in messages
        {
            let t = self.thread_ref(self.gid(w, lane));
            let [bx, by, bz] = t.block;
            let [tx, ty, tz] = t.thread;
            self.emit(
                t,
                format!(
                    "{}:{line}: {}: block: [{bx},{by},{bz}], thread: [{tx},{ty},{tz}] Assertion `{}` failed.\n",
                    text(&file),
                    text(&function),
                    text(&message)
                ),
            );
            first.get_or_insert((t, text(&message), text(&function)));
        }
        if let Some((example, message, function)) = first {
            let key = (FindingKind::AssertionFailed, self.line_of(pc), 0, 0);
            let at = self.src(pc);
            let threads = lanes_mask.count_ones() as u64;
            self.findings.add(key, || Finding {
                kind: FindingKind::AssertionFailed,
                count: 1,
                location: None,
                accesses: vec![],
                threads: vec![ThreadGroup {
                    at,
                    threads,
                    example,
                    state: format!("failed assert({message})"),
                }],
                why: format!(
                    "in {function}: a failed assert() stops the kernel on a GPU, and later CUDA calls return cudaErrorAssert; the emulator stopped the launch here"
                ),
            });
        }
        self.aborted = true;
    }

    /// `trap` (`__trap()`, and cooperative groups' checks that can never fail): the kernel
    /// stops, as on a GPU, where later CUDA calls return an error.
    fn trapped(&mut self, w: &Warp, lanes_mask: u32, pc: u32) {
        let example = self.thread_ref(self.gid(w, lanes_mask.trailing_zeros() as usize));
        let at = self.src(pc);
        let key = (FindingKind::Trap, self.line_of(pc), 0, 0);
        self.findings.add(key, || Finding {
            kind: FindingKind::Trap,
            count: 1,
            location: None,
            accesses: vec![],
            threads: vec![ThreadGroup {
                at,
                threads: lanes_mask.count_ones() as u64,
                example,
                state: "executed trap (__trap())".to_string(),
            }],
            why: "trap aborts the kernel on a GPU (later CUDA calls return cudaErrorLaunchFailure); the emulator stopped the launch here".to_string(),
        });
        self.aborted = true;
    }

    fn stack_overflow(&mut self, w: &Warp, lanes_mask: u32, pc: u32) {
        let example = self.thread_ref(self.gid(w, lanes_mask.trailing_zeros() as usize));
        let at = self.src(pc);
        let key = (FindingKind::StackOverflow, self.line_of(pc), 0, 0);
        self.findings.add(key, || Finding {
            kind: FindingKind::StackOverflow,
            count: 1,
            location: None,
            accesses: vec![],
            threads: vec![ThreadGroup {
                at,
                threads: lanes_mask.count_ones() as u64,
                example,
                state: format!("were {MAX_CALL_DEPTH} calls deep"),
            }],
            why: format!(
                "recursion deeper than {MAX_CALL_DEPTH} nested calls; a GPU's per-thread stack (1 KiB by default, cudaLimitStackSize) overflows long before and the launch fails; the emulator stopped it here"
            ),
        });
        self.aborted = true;
    }

    /// Device `malloc`: an exact-size block (uninitialized: a nonzero pattern, as for shared
    /// memory) with unmapped bytes after it, or NULL when the heap limit would be passed.
    fn malloc(&mut self, w: &Warp, lane: usize, size: u64, pc: u32) -> u64 {
        let base = self.heap.next;
        let next = base
            .checked_add(size)
            .and_then(|end| end.checked_add(GAP + 255))
            .map(|end| end / 256 * 256);
        let fits = size <= self.heap.limit.saturating_sub(self.heap.live) && size <= 1 << 32;
        let Some(next) = next.filter(|&next| fits && size > 0 && next < LOCAL_WIN) else {
            return 0;
        };
        self.progress += 1;
        self.heap.next = next;
        self.heap.live += size;
        let at = self.src(pc);
        let label = if at.line == 0 {
            "malloc".to_string()
        } else {
            format!("malloc@{}:{}", at.file, at.line)
        };
        let _ = (w, lane);
        self.allocs.push(Allocation {
            base,
            data: (0..size as usize)
                .map(|i| ((i as u32).wrapping_mul(2_654_435_761) >> 24) as u8 | 0x41)
                .collect(),
            label,
            heap: Some(HeapBlock {
                size,
                site: pc,
                freed: None,
            }),
            written: Some(vec![0; (size as usize).div_ceil(64)]),
        });
        base
    }

    /// Device `free`: releases a heap block, or reports a double or invalid free.
    fn free(&mut self, w: &Warp, lane: usize, ptr: u64, pc: u32) {
        if ptr == 0 {
            return;
        }
        let me = Access {
            op: AccessOp::Free,
            thread: self.thread_ref(self.gid(w, lane)),
            at: self.src(pc),
        };
        let i = self.allocs.partition_point(|a| a.base <= ptr);
        let block = i.checked_sub(1).filter(|&i| self.allocs[i].base == ptr);
        let heap = block.and_then(|i| self.allocs[i].heap.as_ref().map(|h| (i, h)));
        match heap {
            Some((i, h)) if h.freed.is_none() => {
                let size = h.size;
                self.heap.live -= size;
                self.progress += 1;
                let a = &mut self.allocs[i];
                a.data = Vec::new();
                if let Some(h) = a.heap.as_mut() {
                    h.freed = Some(me);
                }
            }
            Some((i, h)) => {
                let earlier = h.freed.clone();
                let (size, site, label) = (h.size, h.site, self.allocs[i].label.clone());
                let key = (FindingKind::DoubleFree, self.line_of(pc), 0, site as u64);
                self.findings.add(key, || Finding {
                    kind: FindingKind::DoubleFree,
                    count: 1,
                    location: Some(MemLocation {
                        space: report::Space::Global,
                        label,
                        index: 0,
                        address: ptr,
                        note: None,
                    }),
                    accesses: earlier.into_iter().chain([me]).collect(),
                    threads: vec![],
                    why: format!(
                        "the {size}-byte block was already freed; on a GPU a second free() corrupts the device heap"
                    ),
                });
            }
            None => {
                let (loc, obj) = self.mem_location(report::Space::Global, ptr, ptr, 1);
                let key = (FindingKind::InvalidFree, self.line_of(pc), 0, obj);
                self.findings.add(key, || Finding {
                    kind: FindingKind::InvalidFree,
                    count: 1,
                    location: Some(loc),
                    accesses: vec![me],
                    threads: vec![],
                    why: format!(
                        "{ptr:#x} is not the start of a block from device malloc(); host (cudaMalloc) memory and pointers into a block cannot be freed in a kernel"
                    ),
                });
            }
        }
    }

    /// A freed heap block containing `addr`, if any: a use after free rather than a wild access.
    fn freed_block(&self, addr: u64) -> Option<usize> {
        let i = self
            .allocs
            .partition_point(|a| a.base <= addr)
            .checked_sub(1)?;
        let a = &self.allocs[i];
        let h = a.heap.as_ref()?;
        (h.freed.is_some() && addr < a.base + h.size).then_some(i)
    }

    #[allow(clippy::too_many_arguments)]
    fn report_use_after_free(
        &mut self,
        w: &Warp,
        lane: usize,
        i: usize,
        addr: u64,
        size: u32,
        pc: u32,
        op: AccessOp,
    ) {
        let a = &self.allocs[i];
        let Some(h) = a.heap.as_ref() else { return };
        let location = MemLocation {
            space: report::Space::Global,
            label: a.label.clone(),
            index: ((addr - a.base) / size.max(1) as u64) as i64,
            address: addr,
            note: None,
        };
        let key = (
            FindingKind::UseAfterFree,
            self.line_of(pc),
            0,
            h.site as u64,
        );
        let freed = h.freed.clone();
        let me = Access {
            op,
            thread: self.thread_ref(self.gid(w, lane)),
            at: self.src(pc),
        };
        let what = if matches!(op, AccessOp::Read | AccessOp::AtomicRead) {
            "reads give 0"
        } else {
            "the write was dropped"
        };
        self.findings.add(key, || Finding {
            kind: FindingKind::UseAfterFree,
            count: 1,
            location: Some(location),
            accesses: freed.into_iter().chain([me]).collect(),
            threads: vec![],
            why: format!("the block was freed before this {size}-byte access; {what}"),
        });
    }

    fn save_frame(&self, w: &Warp, lane: usize, f: &Function) -> Frame {
        let ts = self.m.tparam_size as usize;
        let tp = lane * ts;
        let local_base = self.rt(w, lane) as usize * self.local_size as usize;
        Frame {
            regs: f
                .regs
                .clone()
                .map(|r| w.regs[r as usize * 32 + lane])
                .collect(),
            tparam: w
                .tparam
                .get(tp + f.tparams.start as usize..tp + f.tparams.end as usize)
                .unwrap_or(&[])
                .to_vec(),
            local: self
                .local
                .get(local_base + f.locals.start as usize..local_base + f.locals.end as usize)
                .unwrap_or(&[])
                .to_vec(),
        }
    }

    fn restore_frame(&mut self, w: &mut Warp, lane: usize, f: &Function, frame: Frame) {
        for (r, v) in f.regs.clone().zip(frame.regs) {
            w.regs[r as usize * 32 + lane] = v;
        }
        let tp = lane * self.m.tparam_size as usize;
        if let Some(s) = w
            .tparam
            .get_mut(tp + f.tparams.start as usize..tp + f.tparams.end as usize)
            .filter(|s| s.len() == frame.tparam.len())
        {
            s.copy_from_slice(&frame.tparam);
        }
        let local_base = self.rt(w, lane) as usize * self.local_size as usize;
        if let Some(s) = self
            .local
            .get_mut(local_base + f.locals.start as usize..local_base + f.locals.end as usize)
            .filter(|s| s.len() == frame.local.len())
        {
            s.copy_from_slice(&frame.local);
        }
    }
}

fn atom_name(op: AtomOp) -> &'static str {
    match op {
        AtomOp::Add | AtomOp::AddPacked(_) => "add",
        AtomOp::Min => "min",
        AtomOp::Max => "max",
        AtomOp::Inc => "inc",
        AtomOp::Dec => "dec",
        AtomOp::And => "and",
        AtomOp::Or => "or",
        AtomOp::Xor => "xor",
        AtomOp::Exch => "exch",
        AtomOp::Cas => "cas",
    }
}

fn tgt_offset(tgt: Tgt, by: usize) -> Tgt {
    match tgt {
        Tgt::G(i, o) => Tgt::G(i, o + by),
        Tgt::S(o) => Tgt::S(o + by),
        Tgt::L(o) => Tgt::L(o + by),
        Tgt::Bad => Tgt::Bad,
    }
}

/// A launch in progress. Only resident blocks have state: block `b` runs in some *slot*, whose
/// warps are `warps[slot * wpb..]`, barriers `blocks[slot]`, shared memory `ctx.shared[slot]`;
/// a finished block's slot goes to the next block.
struct Launch<'a> {
    ctx: Ctx<'a>,
    entry_pc: u32,
    /// Per slot: its warps (register files are kept and reused by the slot's next block).
    warps: Vec<Warp>,
    /// Per slot.
    blocks: Vec<BlockState>,
    nblocks: u64,
    /// Blocks the hardware schedule keeps running at once (grown only to keep progress).
    resident_blocks: u32,
    /// Blocks `0..started` have started.
    started: u64,
    free_slots: Vec<u32>,
    watchdog: Watchdog,
}

/// Tells a stuck kernel from a slow one. Every `RunOptions::watchdog_window` thread-instructions
/// it looks at the progress counter; after a window without progress it hashes the started
/// threads' registers, and when a further quiet window ends with the same hash, nothing is
/// changing anywhere: every thread waits for something that will not happen.
#[derive(Default)]
struct Watchdog {
    next_check: u64,
    progress_seen: u64,
    /// Thread-instructions at the last check that saw progress.
    quiet_since: u64,
    registers: Option<u64>,
    stuck: bool,
}

/// Deterministic PRNG (splitmix64): schedules must repeat for a seed, and need no dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

enum Step {
    Ran,
    Idle,
}

impl Launch<'_> {
    fn over_budget(&self) -> bool {
        self.ctx.thread_instrs >= self.ctx.opts.step_budget
    }

    /// Stop now: an assert failed, the step budget ran out, or the watchdog found the kernel stuck.
    fn must_stop(&mut self) -> bool {
        self.ctx.aborted || self.over_budget() || self.watchdog_says_stuck()
    }

    fn watchdog_says_stuck(&mut self) -> bool {
        let window = self.ctx.opts.watchdog_window;
        let wd = &mut self.watchdog;
        if window == 0 || self.ctx.thread_instrs < wd.next_check {
            return wd.stuck;
        }
        wd.next_check = self.ctx.thread_instrs.saturating_add(window);
        if self.ctx.progress != wd.progress_seen {
            wd.progress_seen = self.ctx.progress;
            wd.quiet_since = self.ctx.thread_instrs;
            wd.registers = None;
            return false;
        }
        let hash = self.register_hash();
        let wd = &mut self.watchdog;
        if wd.registers == Some(hash) {
            wd.stuck = true;
        }
        wd.registers = Some(hash);
        wd.stuck
    }

    /// A hash of what a thread that changes no memory can still change: its registers, call
    /// parameters and which lanes wait or live (not its PC, which cycles through a spin loop).
    fn register_hash(&self) -> u64 {
        let mut h = 0xcbf2_9ce4_8422_2325u64;
        let mut mix = |x: u64| h = (h ^ x).wrapping_mul(0x0100_0000_01b3).rotate_left(29);
        let wpb = self.ctx.wpb as usize;
        let running = |wi: &usize| self.blocks[wi / wpb].live > 0;
        for w in (0..self.warps.len())
            .filter(running)
            .map(|wi| &self.warps[wi])
        {
            mix(((w.live as u64) << 32) | w.blocked as u64);
            w.regs.iter().for_each(|&r| mix(r));
            w.tparam.chunks(8).for_each(|c| mix(rd_le(c, 0, c.len())));
        }
        h
    }

    /// The watchdog found resident blocks stuck while others have not started: start more (up to
    /// twice as many, within the register memory), since a block not yet started may be the one
    /// they wait for. False when none can start.
    fn grow_residency(&mut self) -> bool {
        let nblocks = self.nblocks;
        let per_block = self.ctx.wpb as u64 * 32 * self.ctx.m.nregs as u64 * 8;
        let affordable = (MAX_REGISTER_BYTES / per_block.max(1)).min(nblocks) as u32;
        let target = self.resident_blocks.saturating_mul(2).min(affordable);
        if self.started >= nblocks || target <= self.resident_blocks {
            return false;
        }
        self.resident_blocks = target;
        self.watchdog.stuck = false;
        self.watchdog.registers = None;
        self.ctx.progress += 1;
        true
    }

    /// Starts the next block in a free slot (a new one if none is free); returns the slot.
    fn start_next_block(&mut self) -> u32 {
        let block = self.started;
        self.started += 1;
        self.ctx.progress += 1;
        let (tpb, wpb) = (self.ctx.tpb, self.ctx.wpb);
        let slot = match self.free_slots.pop() {
            Some(slot) => slot,
            None => {
                let slot = self.blocks.len() as u32;
                self.blocks.push(BlockState::default());
                let regs_len = self.ctx.m.nregs as usize * 32;
                for _ in 0..wpb {
                    self.warps.push(Warp {
                        regs: vec![0; regs_len],
                        ..Warp::default()
                    });
                }
                self.ctx.shared.push(Vec::new());
                let local = self.ctx.local.len() + tpb as usize * self.ctx.local_size as usize;
                self.ctx.local.resize(local, 0);
                slot
            }
        };
        self.blocks[slot as usize] = BlockState {
            live: tpb,
            exited: 0,
            first_exit: None,
            bars: vec![Bar::default(); 16],
        };
        let tparam_len = self.ctx.m.tparam_size as usize * 32;
        let start = self.entry_pc;
        for wi in 0..wpb {
            let w = &mut self.warps[(slot * wpb + wi) as usize];
            let first = wi * 32;
            let n = (tpb - first).min(32);
            let live = if n == 32 { u32::MAX } else { (1u32 << n) - 1 };
            // The register file is the slot's previous block's: registers a kernel reads
            // before writing hold leftovers, as on hardware, and not a helpful zero.
            let regs = std::mem::take(&mut w.regs);
            *w = Warp {
                block,
                slot,
                first,
                gw: slot * wpb + wi,
                pc: start,
                active: live,
                live,
                blocked: 0,
                wsync_wait: 0,
                wsync_mask: [0; 32],
                lane_pc: [start; 32],
                bar_id: [0; 32],
                regs,
                tparam: vec![0; tparam_len],
                stacks: vec![Vec::new(); 32],
                frames: (0..32).map(|_| Vec::new()).collect(),
                spin: 0,
                favored: None,
            };
        }
        let shared = &mut self.ctx.shared[slot as usize];
        shared.clear();
        shared.extend_from_slice(&self.ctx.shared_init);
        let sw = self.ctx.shared_words;
        if self.ctx.shared_written.len() < (slot as usize + 1) * sw {
            self.ctx.shared_written.resize((slot as usize + 1) * sw, 0);
        }
        let written = &mut self.ctx.shared_written[slot as usize * sw..(slot as usize + 1) * sw];
        written.fill(0);
        // The reserved region starts cleared (see `run_launch`): written, for initcheck.
        if self.ctx.m.reserved_smem {
            for byte in self.ctx.reserved_base as usize..self.ctx.shared_size as usize {
                if let Some(bits) = written.get_mut(byte / 64) {
                    *bits |= 1 << (byte % 64);
                }
            }
        }
        let ls = tpb as usize * self.ctx.local_size as usize;
        self.ctx.local[slot as usize * ls..(slot as usize + 1) * ls].fill(0);
        if let Some(race) = self.ctx.race.as_mut() {
            race.block_started(slot, block);
        }
        slot
    }

    fn finish_block(&mut self, slot: u32) {
        if let Some(race) = self.ctx.race.as_mut() {
            race.block_finished(slot);
        }
        let wpb = self.ctx.wpb;
        for w in &mut self.warps[(slot * wpb) as usize..((slot + 1) * wpb) as usize] {
            w.tparam = Vec::new();
            w.stacks = Vec::new();
            w.frames = Vec::new();
        }
        self.free_slots.push(slot);
    }

    /// Round robin over the resident blocks' warps, one instruction each, in warp order; a block
    /// that finishes makes room for the next one.
    fn run_hardware(&mut self) {
        let nblocks = self.nblocks;
        let wpb = self.ctx.wpb as usize;
        // Slots of the running blocks, in the order the blocks started.
        let mut resident: Vec<u32> = Vec::new();
        let mut stalled_rounds = 0u64;
        let mut patience = STALL_ROUNDS;
        loop {
            while (resident.len() as u32) < self.resident_blocks && self.started < nblocks {
                let slot = self.start_next_block();
                resident.push(slot);
            }
            let mut progressed = false;
            for &b in &resident {
                for wi in b as usize * wpb..(b as usize + 1) * wpb {
                    if let Step::Ran = self.step(wi) {
                        progressed = true;
                    }
                }
            }
            if self.must_stop() {
                if self.watchdog.stuck && !self.ctx.aborted && self.grow_residency() {
                    continue;
                }
                break;
            }
            let before = resident.len();
            let mut k = 0;
            while k < resident.len() {
                let b = resident[k];
                if self.blocks[b as usize].live == 0 {
                    resident.remove(k);
                    self.finish_block(b);
                } else {
                    k += 1;
                }
            }
            if resident.len() < before {
                stalled_rounds = 0;
                continue;
            }
            if self.started == nblocks {
                if !progressed {
                    break;
                }
                continue;
            }
            stalled_rounds += 1;
            if !progressed || stalled_rounds >= patience {
                // Resident blocks wait for something (a flag, a barrier that never completes):
                // start another block rather than stop, as a GPU with more SMs would.
                let register_bytes = (self.resident_blocks as u64 + 1)
                    * wpb as u64
                    * 32
                    * self.ctx.m.nregs as u64
                    * 8;
                if register_bytes > MAX_REGISTER_BYTES {
                    if !progressed {
                        break;
                    }
                    continue;
                }
                self.resident_blocks += 1;
                stalled_rounds = 0;
                if progressed {
                    patience = patience.saturating_mul(2);
                }
            }
        }
    }

    /// Returns true when every thread exited.
    fn run(&mut self) -> bool {
        match self.ctx.opts.schedule {
            Schedule::Hardware => self.run_hardware(),
            Schedule::Random { seed } | Schedule::Adversarial { seed } => {
                while self.started < self.nblocks {
                    self.start_next_block();
                }
                let n = self.warps.len();
                let adversarial = matches!(self.ctx.opts.schedule, Schedule::Adversarial { .. });
                let mut rng = Rng(seed ^ 0x5EED);
                'outer: loop {
                    if self.must_stop() {
                        break;
                    }
                    let start = rng.below(n);
                    let mut found = None;
                    for k in 0..n {
                        let wi = (start + k) % n;
                        let w = &mut self.warps[wi];
                        if w.active == 0 {
                            w.regroup();
                        }
                        if w.active != 0 {
                            found = Some(wi);
                            break;
                        }
                    }
                    let Some(wi) = found else { break 'outer };
                    let quantum = if adversarial {
                        100_000
                    } else {
                        1 + rng.below(32)
                    };
                    self.ctx.touched_global_sync = false;
                    for _ in 0..quantum {
                        if let Step::Idle = self.step(wi) {
                            break;
                        }
                        if self.ctx.aborted || self.over_budget() {
                            break;
                        }
                        // A flag just published or read: let another warp act on it (or fail
                        // to) before this one goes on, and stop a spinning warp early.
                        if adversarial && self.ctx.touched_global_sync {
                            break;
                        }
                    }
                }
            }
        }
        let live: u32 = self.warps.iter().map(|w| w.live.count_ones()).sum();
        if live == 0 && self.started == self.nblocks {
            return true;
        }
        if self.ctx.aborted {
            return false;
        }
        let kind = if self.over_budget() {
            FindingKind::StepBudgetExhausted
        } else if self.watchdog.stuck {
            FindingKind::Stuck
        } else {
            FindingKind::Deadlock
        };
        if self.ctx.opts.synccheck {
            self.report_warp_sync_hangs();
        }
        self.report_stuck(kind);
        false
    }

    /// Lanes that wait in a warp-synchronous call for lanes of its mask that are elsewhere (at a
    /// barrier, in another kind of call or with another mask, or running on): synccheck's
    /// "never arrive" finding, reported when the launch can go no further.
    fn report_warp_sync_hangs(&mut self) {
        for wi in 0..self.warps.len() {
            let w = &self.warps[wi];
            let waiting = w.blocked & w.wsync_wait & w.live;
            let mut groups: Vec<(u32, u32, u32)> = Vec::new();
            lanes!(waiting, l, {
                let key = (w.lane_pc[l], w.wsync_mask[l]);
                match groups.iter_mut().find(|g| (g.0, g.1) == key) {
                    Some(g) => g.2 |= 1 << l,
                    None => groups.push((key.0, key.1, 1 << l)),
                }
            });
            for (pc, mask, lanes) in groups {
                let Some(op) = self.ctx.m.code.get(pc as usize).map(|i| &i.op) else {
                    continue;
                };
                let mut matching = 0u32;
                lanes!(waiting, l, {
                    let theirs = self.ctx.m.code.get(w.lane_pc[l] as usize);
                    if w.wsync_mask[l] == mask && theirs.is_some_and(|i| same_collective(&i.op, op))
                    {
                        matching |= 1 << l;
                    }
                });
                let missing = mask & w.live & !matching;
                if missing == 0 {
                    continue;
                }
                let name = collective_name(op);
                let mut threads = vec![ThreadGroup {
                    at: self.ctx.src(pc),
                    threads: lanes.count_ones() as u64,
                    example: self
                        .ctx
                        .thread_ref(self.ctx.gid(w, lanes.trailing_zeros() as usize)),
                    state: format!("wait in {name}({mask:#010x})"),
                }];
                let mut elsewhere: Vec<(u32, String, u32)> = Vec::new();
                lanes!(missing, l, {
                    let bit = 1u32 << l;
                    let (at, state) = if w.blocked & bit == 0 {
                        (w.lane_pc[l], "are running elsewhere".to_string())
                    } else if w.wsync_wait & bit == 0 {
                        (
                            w.lane_pc[l].saturating_sub(1),
                            format!("wait at barrier {}", w.bar_id[l]),
                        )
                    } else {
                        let theirs = self.ctx.m.code.get(w.lane_pc[l] as usize);
                        let other =
                            theirs.map_or("a warp-synchronous call", |i| collective_name(&i.op));
                        (
                            w.lane_pc[l],
                            format!("wait in {other}({:#010x})", w.wsync_mask[l]),
                        )
                    };
                    match elsewhere.iter_mut().find(|e| e.0 == at && e.1 == state) {
                        Some(e) => e.2 |= bit,
                        None => elsewhere.push((at, state, bit)),
                    }
                });
                for (at, state, lanes) in elsewhere {
                    threads.push(ThreadGroup {
                        at: self.ctx.src(at),
                        threads: lanes.count_ones() as u64,
                        example: self
                            .ctx
                            .thread_ref(self.ctx.gid(w, lanes.trailing_zeros() as usize)),
                        state: format!("named in the mask {state}"),
                    });
                }
                let kind = FindingKind::WarpSync {
                    problem: WarpSyncProblem::NeverArrive,
                };
                let key = (kind, self.ctx.line_of(pc), 0, 0);
                self.ctx.findings.add(key, || Finding {
                    kind,
                    count: 1,
                    location: None,
                    accesses: vec![],
                    threads,
                    why: format!(
                        "every lane named in the mask that has not exited must reach a {name}() with the same mask; these never do, so the warp hangs (CUDA leaves this undefined)"
                    ),
                });
            }
        }
    }

    fn report_stuck(&mut self, kind: FindingKind) {
        // Group live threads by where they are and what they wait for.
        let mut groups: Vec<(u32, String, u64, u64)> = Vec::new();
        let mut total = 0u64;
        // Resident blocks in block order, so each group's example is its lowest thread.
        let wpb = self.ctx.wpb as usize;
        let mut slots: Vec<usize> = (0..self.blocks.len())
            .filter(|&s| self.blocks[s].live > 0)
            .collect();
        slots.sort_by_key(|&s| self.warps[s * wpb].block);
        for wi in slots
            .iter()
            .flat_map(|&s| s * wpb..(s + 1) * wpb)
            .collect::<Vec<_>>()
        {
            let w = &mut self.warps[wi];
            w.flush();
            lanes!(w.live, l, {
                let (pc, state) = if w.blocked & (1 << l) != 0 {
                    if w.wsync_wait & (1 << l) != 0 {
                        (
                            w.lane_pc[l],
                            "waiting in a warp-synchronous instruction".to_string(),
                        )
                    } else {
                        (
                            w.lane_pc[l].saturating_sub(1),
                            format!("waiting at barrier {}", w.bar_id[l]),
                        )
                    }
                } else {
                    (w.lane_pc[l], "running".to_string())
                };
                total += 1;
                let gid = w.block * self.ctx.tpb as u64 + (w.first + l as u32) as u64;
                match groups.iter_mut().find(|g| g.0 == pc && g.1 == state) {
                    Some(g) => g.2 += 1,
                    None => groups.push((pc, state, 1, gid)),
                }
            });
        }
        if self.started < self.nblocks {
            let waiting = (self.nblocks - self.started) * self.ctx.tpb as u64;
            total += waiting;
            groups.push((
                self.entry_pc,
                "not started: waits for a resident block to finish".to_string(),
                waiting,
                self.started * self.ctx.tpb as u64,
            ));
        }
        groups.sort_by(|a, b| b.2.cmp(&a.2).then(a.0.cmp(&b.0)));
        groups.truncate(8);
        let threads: Vec<ThreadGroup> = groups
            .iter()
            .map(|g| ThreadGroup {
                at: self.ctx.src(g.0),
                threads: g.2,
                example: self.ctx.thread_ref(g.3),
                state: g.1.clone(),
            })
            .collect();
        let why = match kind {
            FindingKind::StepBudgetExhausted => format!(
                "stopped by the step budget after {} thread-instructions with {total} threads still running; a thread that waits for something that never happens (a flag, a lock) spins forever",
                self.ctx.thread_instrs
            ),
            FindingKind::Stuck => format!(
                "for the last {} thread-instructions no thread changed memory, completed a barrier or exited, and no thread's registers changed: {total} threads wait for something that never happens (a flag nobody sets, a lock nobody releases)",
                self.ctx.thread_instrs - self.watchdog.quiet_since
            ),
            _ => format!(
                "{total} threads wait at barriers that can never complete: the threads they wait for exited or wait elsewhere"
            ),
        };
        let key = (kind, threads.first().map(|t| t.at.line).unwrap_or(0), 0, 0);
        let new = self.ctx.findings.add(key, || Finding {
            kind,
            count: 1,
            location: None,
            accesses: vec![],
            threads,
            why,
        });
        if let (Some(index), Some(t)) = (new, self.ctx.trace.as_deref_mut()) {
            t.finding(index, vec![]);
        }
    }

    /// Runs one instruction of warp `wi` (for its active lanes).
    fn step(&mut self, wi: usize) -> Step {
        let w = &mut self.warps[wi];
        if w.active == 0 {
            if w.runnable() == 0 {
                w.favored = None;
                return Step::Idle;
            }
            w.regroup();
            if w.active == 0 {
                return Step::Idle;
            }
        }
        let check = exec(&mut self.ctx, &mut self.blocks, w);
        if let Some(b) = check {
            self.check_barriers(b);
        }
        Step::Ran
    }

    /// Completes the barriers of the block in `slot` that every live thread reached.
    fn check_barriers(&mut self, slot: u32) {
        for id in 0..16u8 {
            let blk = &self.blocks[slot as usize];
            let bar = &blk.bars[id as usize];
            if bar.arrived == 0 {
                continue;
            }
            let expected = bar.expected.unwrap_or(blk.live);
            if bar.arrived >= expected {
                self.release(slot, id);
            }
        }
    }

    fn release(&mut self, slot: u32, id: u8) {
        self.ctx.progress += 1;
        let bar = std::mem::take(&mut self.blocks[slot as usize].bars[id as usize]);
        let blk = &self.blocks[slot as usize];
        if self.ctx.opts.synccheck
            && bar.expected.is_none()
            && (bar.sites.len() > 1 || blk.exited > 0)
        {
            let mut threads: Vec<ThreadGroup> = bar
                .sites
                .iter()
                .map(|&(pc, n, gid)| ThreadGroup {
                    at: self.ctx.src(pc),
                    threads: n as u64,
                    example: self.ctx.thread_ref(gid),
                    state: format!("arrived at barrier {id}"),
                })
                .collect();
            if let Some((gid, pc)) = blk.first_exit {
                threads.push(ThreadGroup {
                    at: self.ctx.src(pc),
                    threads: blk.exited as u64,
                    example: self.ctx.thread_ref(gid),
                    state: "exited without arriving (first exit)".into(),
                });
            }
            let lines: Vec<String> = bar
                .sites
                .iter()
                .map(|s| self.ctx.src(s.0).to_string())
                .collect();
            let why = if bar.sites.len() > 1 {
                format!(
                    "threads of one block reached different __syncthreads() ({}); every thread of the block must reach the same barrier",
                    lines.join(", ")
                )
            } else {
                format!(
                    "only {} of the block's {} threads reached this barrier: it sits in code that not every thread runs (e.g. inside `if`)",
                    bar.arrived, self.ctx.tpb
                )
            };
            let key = (
                FindingKind::BarrierDivergence,
                self.ctx.line_of(bar.sites[0].0),
                0,
                0,
            );
            let new = self.ctx.findings.add(key, || Finding {
                kind: FindingKind::BarrierDivergence,
                count: 1,
                location: None,
                accesses: vec![],
                threads,
                why,
            });
            if let (Some(index), Some(t)) = (new, self.ctx.trace.as_deref_mut()) {
                t.finding(index, vec![]);
            }
        }
        let block = self.warps[(slot * self.ctx.wpb) as usize].block as u32;
        if let Some(t) = self.ctx.trace.as_deref_mut() {
            t.barrier_release(block, id);
        }
        let wpb = self.ctx.wpb;
        for wi in (slot * wpb)..((slot + 1) * wpb) {
            let w = &mut self.warps[wi as usize];
            let waiting = w.blocked & !w.wsync_wait;
            let mut freed = 0u32;
            lanes!(waiting, l, {
                if w.bar_id[l] == id {
                    freed |= 1 << l;
                }
            });
            if freed == 0 {
                continue;
            }
            if bar.red_dest {
                lanes!(freed, l, {
                    let at = w.lane_pc[l].saturating_sub(1) as usize;
                    if let Some(Instr {
                        op:
                            Op::Bar {
                                kind, d: Some(d), ..
                            },
                        ..
                    }) = self.ctx.m.code.get(at)
                    {
                        let v = match kind {
                            BarKind::RedPopc => bar.red as u64,
                            BarKind::RedAnd => (bar.red == bar.arrived) as u64,
                            _ => (bar.red > 0) as u64,
                        };
                        w.regs[*d as usize * 32 + l] = v;
                    }
                });
            }
            w.blocked &= !freed;
            w.regroup();
        }
        if let Some(r) = self.ctx.race.as_mut() {
            r.barrier(slot, (slot * wpb)..((slot + 1) * wpb));
        }
    }
}

/// Executes the instruction at `w.pc` for `w.active`. Returns a block whose barriers may now
/// be complete (after an arrival or an exit).
fn exec(ctx: &mut Ctx, blocks: &mut [BlockState], w: &mut Warp) -> Option<u32> {
    let pc = w.pc;
    let m = ctx.m;
    if ctx.trace.is_some() {
        let warp = ctx.trace_warp(w);
        if let Some(t) = ctx.trace.as_deref_mut() {
            t.step(warp, w.active, pc);
        }
    }
    let Some(ins) = m.code.get(pc as usize) else {
        // Ran off the end of the code: treat as exit.
        return exit_lanes(ctx, blocks, w, w.active, pc);
    };
    let active = w.active;
    ctx.thread_instrs += active.count_ones() as u64;
    ctx.clock += 1;
    let mut exec = active;
    if let Some((p, neg)) = ins.guard {
        let pred = &w.regs[p as usize * 32..][..32];
        let mut e = 0u32;
        lanes!(active, l, {
            if (pred[l] & 1 != 0) != neg {
                e |= 1 << l;
            }
        });
        exec = e;
    }
    match &ins.op {
        Op::Mov { ty, d, a } => {
            let bits = ty.bits();
            let (d, a) = (*d as usize * 32, *a);
            if *ty == Ty::Pred {
                lanes!(exec, l, {
                    let v = ctx.get(w, a, l) & 1;
                    w.regs[d + l] = v;
                });
            } else {
                lanes!(exec, l, {
                    let v = alu::mask(ctx.get(w, a, l), bits);
                    w.regs[d + l] = v;
                });
            }
        }
        Op::Unpack { part_bits, ds, a } => {
            lanes!(exec, l, {
                let v = ctx.get(w, *a, l);
                for (i, d) in ds.iter().enumerate() {
                    if let Some(d) = d {
                        w.regs[*d as usize * 32 + l] =
                            alu::mask(v >> (i as u32 * part_bits), *part_bits);
                    }
                }
            });
        }
        Op::Pack {
            part_bits,
            d,
            parts,
        } => {
            lanes!(exec, l, {
                let mut v = 0u64;
                for (i, p) in parts.iter().enumerate() {
                    v |= alu::mask(ctx.get(w, *p, l), *part_bits) << (i as u32 * part_bits);
                }
                w.regs[*d as usize * 32 + l] = v;
            });
        }
        Op::Bin {
            op,
            ty,
            d,
            a,
            b,
            fm,
        } => {
            let (op, ty, d, a, b, fm) = (*op, *ty, *d as usize * 32, *a, *b, *fm);
            if bin_fast(ctx, w, exec, op, ty, d, a, b, fm) {
                w.advance();
                return None;
            }
            lanes!(exec, l, {
                let v = alu::bin(op, ty, ctx.get(w, a, l), ctx.get(w, b, l), fm);
                w.regs[d + l] = v;
            });
        }
        Op::Half2 {
            op,
            ty,
            fm,
            d,
            a,
            b,
            c,
        } => {
            let (op, ty, fm) = (*op, *ty, *fm);
            map3(ctx, w, exec, *d as usize * 32, *a, *b, *c, |x, y, z| {
                alu::half2(op, ty, fm, x, y, z)
            });
        }
        Op::Int3 { op, d, a, b, c } => {
            let op = *op;
            map3(ctx, w, exec, *d as usize * 32, *a, *b, *c, |x, y, z| {
                alu::int3(op, x, y, z)
            });
        }
        Op::Un { op, ty, d, a, fm } => {
            let (op, ty, d, a, fm) = (*op, *ty, *d as usize * 32, *a, *fm);
            lanes!(exec, l, {
                let v = alu::un(op, ty, ctx.get(w, a, l), fm);
                w.regs[d + l] = v;
            });
        }
        Op::Mad {
            ty,
            hi,
            wide,
            d,
            a,
            b,
            c,
            fm,
        } => {
            let d = *d as usize * 32;
            let (a, b, c) = (*a, *b, *c);
            let done = match (int_class(*ty), *hi, *wide) {
                (Some((32, _)), false, false) => {
                    map3(ctx, w, exec, d, a, b, c, |x, y, z| {
                        (x as u32).wrapping_mul(y as u32).wrapping_add(z as u32) as u64
                    });
                    true
                }
                (Some((64, _)), false, false) => {
                    map3(ctx, w, exec, d, a, b, c, |x, y, z| {
                        x.wrapping_mul(y).wrapping_add(z)
                    });
                    true
                }
                (Some((32, true)), false, true) => {
                    map3(ctx, w, exec, d, a, b, c, |x, y, z| {
                        ((x as u32 as i32 as i64) * (y as u32 as i32 as i64)).wrapping_add(z as i64)
                            as u64
                    });
                    true
                }
                (Some((32, false)), false, true) => {
                    map3(ctx, w, exec, d, a, b, c, |x, y, z| {
                        (x as u32 as u64 * y as u32 as u64).wrapping_add(z)
                    });
                    true
                }
                _ => false,
            };
            if done {
                w.advance();
                return None;
            }
            lanes!(exec, l, {
                let v = alu::mad(
                    *ty,
                    *hi,
                    *wide,
                    ctx.get(w, a, l),
                    ctx.get(w, b, l),
                    ctx.get(w, c, l),
                    *fm,
                );
                w.regs[d + l] = v;
            });
        }
        Op::Setp {
            cmp,
            ty,
            d,
            d2,
            a,
            b,
            comb,
            ftz,
        } => {
            let d = *d as usize * 32;
            if comb.is_none() {
                let d2 = d2.map(|x| x as usize * 32);
                let (a, b, cmp) = (*a, *b, *cmp);
                let done = match *ty {
                    Ty::B32 | Ty::U32 => setp_int(ctx, w, exec, d, d2, a, b, cmp, |x| x as u32),
                    Ty::S32 => setp_int(ctx, w, exec, d, d2, a, b, cmp, |x| x as u32 as i32),
                    Ty::B64 | Ty::U64 => setp_int(ctx, w, exec, d, d2, a, b, cmp, |x| x),
                    Ty::S64 => setp_int(ctx, w, exec, d, d2, a, b, cmp, |x| x as i64),
                    _ => false,
                };
                if done {
                    w.advance();
                    return None;
                }
            }
            lanes!(exec, l, {
                let r = alu::compare(*cmp, *ty, ctx.get(w, *a, l), ctx.get(w, *b, l), *ftz);
                let (r1, r2) = match comb {
                    Some((bo, c, neg)) => {
                        let cv = (ctx.get(w, *c, l) & 1 != 0) != *neg;
                        (alu::bool_op(*bo, r, cv), alu::bool_op(*bo, !r, cv))
                    }
                    None => (r, !r),
                };
                w.regs[d + l] = r1 as u64;
                if let Some(d2) = d2 {
                    w.regs[*d2 as usize * 32 + l] = r2 as u64;
                }
            });
        }
        Op::Set {
            cmp,
            dty,
            ty,
            d,
            a,
            b,
        } => {
            let d = *d as usize * 32;
            lanes!(exec, l, {
                let r = alu::compare(*cmp, *ty, ctx.get(w, *a, l), ctx.get(w, *b, l), false);
                let v = if dty.float() {
                    if r { 1.0f32.to_bits() as u64 } else { 0 }
                } else if r {
                    alu::mask(u64::MAX, dty.bits())
                } else {
                    0
                };
                w.regs[d + l] = v;
            });
        }
        Op::Selp {
            ty,
            d,
            a,
            b,
            c,
            neg,
        } => {
            let d = *d as usize * 32;
            let bits = ty.bits();
            lanes!(exec, l, {
                let p = (ctx.get(w, *c, l) & 1 != 0) != *neg;
                let v = if p {
                    ctx.get(w, *a, l)
                } else {
                    ctx.get(w, *b, l)
                };
                w.regs[d + l] = alu::mask(v, bits);
            });
        }
        Op::Slct {
            ty,
            cty,
            d,
            a,
            b,
            c,
        } => {
            let d = *d as usize * 32;
            lanes!(exec, l, {
                let cv = ctx.get(w, *c, l);
                let ge = if *cty == Ty::F32 {
                    f32::from_bits(cv as u32) >= 0.0
                } else {
                    alu::sext(cv, 32) >= 0
                };
                let v = if ge {
                    ctx.get(w, *a, l)
                } else {
                    ctx.get(w, *b, l)
                };
                w.regs[d + l] = alu::mask(v, ty.bits());
            });
        }
        Op::Cvt {
            dty,
            sty,
            rnd,
            fm,
            d,
            a,
            dbits,
        } => {
            let d = *d as usize * 32;
            lanes!(exec, l, {
                let v = alu::cvt(*dty, *sty, *rnd, *fm, ctx.get(w, *a, l), *dbits);
                w.regs[d + l] = v;
            });
        }
        Op::Cvta {
            to,
            space,
            d,
            a,
            wide,
        } => {
            let d = *d as usize * 32;
            let win = match space {
                Space::Shared => SHARED_WIN,
                Space::Local => LOCAL_WIN,
                _ => 0,
            };
            lanes!(exec, l, {
                let x = ctx.get(w, *a, l);
                let v = if *to {
                    x.wrapping_sub(win)
                } else {
                    x.wrapping_add(win)
                };
                w.regs[d + l] = if *wide { v } else { alu::mask(v, 32) };
            });
        }
        Op::Bfe { ty, d, a, b, c } => {
            let d = *d as usize * 32;
            lanes!(exec, l, {
                w.regs[d + l] =
                    alu::bfe(*ty, ctx.get(w, *a, l), ctx.get(w, *b, l), ctx.get(w, *c, l));
            });
        }
        Op::Bfi { ty, d, f, b, c, e } => {
            let d = *d as usize * 32;
            lanes!(exec, l, {
                w.regs[d + l] = alu::bfi(
                    *ty,
                    ctx.get(w, *f, l),
                    ctx.get(w, *b, l),
                    ctx.get(w, *c, l),
                    ctx.get(w, *e, l),
                );
            });
        }
        Op::Prmt { d, a, b, c } => {
            let d = *d as usize * 32;
            lanes!(exec, l, {
                w.regs[d + l] = alu::prmt(ctx.get(w, *a, l), ctx.get(w, *b, l), ctx.get(w, *c, l));
            });
        }
        Op::TestP { t, ty, d, a } => {
            let d = *d as usize * 32;
            lanes!(exec, l, {
                w.regs[d + l] = alu::testp(*t, *ty, ctx.get(w, *a, l)) as u64;
            });
        }
        Op::Ld {
            space,
            ty,
            ds,
            addr,
            strong,
            dbits,
        } => {
            let esize = ty.bytes();
            let total = esize * ds.len() as u32;
            let kind = if strong.is_strong() {
                race::Kind::StrongRead
            } else {
                race::Kind::Read
            };
            let op = if strong.is_strong() {
                AccessOp::AtomicRead
            } else {
                AccessOp::Read
            };
            let acquire = if *strong == Strength::Acquire {
                race::Acquire::Now
            } else {
                race::Acquire::AtNextFence
            };
            if ctx.banks.is_some() {
                ctx.count_banks(w, exec, *space, addr, total, pc, false);
            }
            // A plain read that only seeds a CAS loop is not checked (see `cas_seed.rs`).
            let race_checked = !m.cas_seed.get(pc as usize).copied().unwrap_or(false);
            if let [Some(dreg)] = ds.as_slice()
                && *space != Space::Param
            {
                let dreg = *dreg as usize * 32;
                let sign_extend = ty.signed() && *dbits > ty.bits();
                // Read once: `ctx` changes inside the loop, so the compiler could not hoist it.
                let tracing = ctx.trace.is_some();
                lanes!(exec, l, {
                    let a = ctx.addr(w, addr, l);
                    let tgt = ctx.resolve(w, l, *space, a, total, total, pc, op);
                    if race_checked {
                        ctx.race_check(w, l, tgt, total, kind, pc);
                    }
                    ctx.init_read(w, l, tgt, total, pc, op);
                    if strong.is_strong() {
                        sync_after(ctx, w, l, tgt, kind, acquire, false);
                    }
                    let raw = ctx.read_tgt(tgt, esize as usize, w.slot);
                    if tracing {
                        let strong = strong.is_strong();
                        ctx.trace_access(w, l, tgt, *ty, (raw, None), TraceOp::Read, strong, None);
                    }
                    w.regs[dreg + l] = if sign_extend {
                        alu::mask(alu::sext(raw, ty.bits()) as u64, *dbits)
                    } else {
                        raw
                    };
                });
                w.advance();
                return None;
            }
            let tracing = ctx.trace.is_some();
            lanes!(exec, l, {
                let vals: [u64; 4] = match (space, addr) {
                    (Space::Param, Addr::KParam(o)) => {
                        let mut v = [0u64; 4];
                        for (i, x) in v.iter_mut().enumerate().take(ds.len()) {
                            *x = rd_le(
                                &ctx.kparams,
                                *o as usize + i * esize as usize,
                                esize as usize,
                            );
                        }
                        v
                    }
                    (Space::Param, Addr::TParam(o)) => {
                        let base = l * m.tparam_size as usize + *o as usize;
                        let mut v = [0u64; 4];
                        for (i, x) in v.iter_mut().enumerate().take(ds.len()) {
                            *x = rd_le(&w.tparam, base + i * esize as usize, esize as usize);
                        }
                        v
                    }
                    _ => {
                        let a = ctx.addr(w, addr, l);
                        let tgt = ctx.resolve(w, l, *space, a, total, total, pc, op);
                        ctx.race_check(w, l, tgt, total, kind, pc);
                        ctx.init_read(w, l, tgt, total, pc, op);
                        if strong.is_strong() {
                            sync_after(ctx, w, l, tgt, kind, acquire, false);
                        }
                        let mut v = [0u64; 4];
                        for (i, x) in v.iter_mut().enumerate().take(ds.len()) {
                            let at = tgt_offset(tgt, i * esize as usize);
                            *x = ctx.read_tgt(at, esize as usize, w.slot);
                            if tracing {
                                let strong = strong.is_strong();
                                ctx.trace_access(
                                    w,
                                    l,
                                    at,
                                    *ty,
                                    (*x, None),
                                    TraceOp::Read,
                                    strong,
                                    None,
                                );
                            }
                        }
                        v
                    }
                };
                for (i, d) in ds.iter().enumerate() {
                    if let Some(d) = d {
                        let raw = vals[i];
                        let v = if ty.signed() && *dbits > ty.bits() {
                            alu::mask(alu::sext(raw, ty.bits()) as u64, *dbits)
                        } else {
                            raw
                        };
                        w.regs[*d as usize * 32 + l] = v;
                    }
                }
            });
        }
        Op::St {
            space,
            ty,
            vals,
            addr,
            strong,
        } => {
            let esize = ty.bytes();
            let total = esize * vals.len() as u32;
            let kind = if strong.is_strong() {
                race::Kind::StrongWrite
            } else {
                race::Kind::Write
            };
            let op = if strong.is_strong() {
                AccessOp::AtomicWrite
            } else {
                AccessOp::Write
            };
            let release = *strong == Strength::Release;
            if ctx.banks.is_some() {
                ctx.count_banks(w, exec, *space, addr, total, pc, true);
            }
            let tracing = ctx.trace.is_some();
            // Lanes of this one store that write the same value to the same place: the hardware
            // lands one of them, which is that value either way (every lane of a warp storing a
            // warp-reduced result, as cooperative groups do), so only the first is race-checked.
            let mut stored: Vec<(Tgt, [u64; 4])> = Vec::new();
            lanes!(exec, l, {
                match (space, addr) {
                    (Space::Param, Addr::TParam(o)) => {
                        let base = l * m.tparam_size as usize + *o as usize;
                        for (i, v) in vals.iter().enumerate() {
                            let x = ctx.get(w, *v, l);
                            wr_le(&mut w.tparam, base + i * esize as usize, esize as usize, x);
                        }
                    }
                    (Space::Param, _) => {}
                    _ => {
                        let a = ctx.addr(w, addr, l);
                        let tgt = ctx.resolve(w, l, *space, a, total, total, pc, op);
                        let mut values = [0u64; 4];
                        for (slot, v) in values.iter_mut().zip(vals.iter()) {
                            *slot = alu::mask(ctx.get(w, *v, l), esize * 8);
                        }
                        let same = stored.iter().any(|(t, v)| *t == tgt && *v == values);
                        if !same {
                            stored.push((tgt, values));
                            ctx.race_check(w, l, tgt, total, kind, pc);
                        }
                        for (i, v) in vals.iter().enumerate() {
                            let x = ctx.get(w, *v, l);
                            let at = tgt_offset(tgt, i * esize as usize);
                            if ctx.read_tgt(at, esize as usize, w.slot) != alu::mask(x, esize * 8) {
                                ctx.progress += 1;
                            }
                            ctx.write_tgt(at, esize as usize, w.slot, x);
                            if tracing {
                                let strong = strong.is_strong();
                                ctx.trace_access(
                                    w,
                                    l,
                                    at,
                                    *ty,
                                    (x, None),
                                    TraceOp::Write,
                                    strong,
                                    None,
                                );
                            }
                        }
                        ctx.init_write(w, tgt, total);
                        if strong.is_strong() {
                            sync_after(ctx, w, l, tgt, kind, race::Acquire::Never, release);
                        }
                    }
                }
            });
        }
        Op::Atom {
            space,
            op,
            ty,
            d,
            addr,
            b,
            c,
            release,
        } => {
            let size = ty.bytes();
            let tracing = ctx.trace.is_some();
            lanes!(exec, l, {
                let a = ctx.addr(w, addr, l);
                let tgt = ctx.resolve(w, l, *space, a, size, size, pc, AccessOp::Atomic);
                ctx.init_read(w, l, tgt, size, pc, AccessOp::Atomic);
                let old = ctx.read_tgt(tgt, size as usize, w.slot);
                let bv = ctx.get(w, *b, l);
                let cv = ctx.get(w, *c, l);
                let (new, wrote) = atom_op(*op, *ty, old, bv, cv);
                let kind = if wrote {
                    race::Kind::Rmw
                } else {
                    race::Kind::StrongRead
                };
                ctx.race_check(w, l, tgt, size, kind, pc);
                if wrote {
                    if new != alu::mask(old, size * 8) {
                        ctx.progress += 1;
                    }
                    ctx.write_tgt(tgt, size as usize, w.slot, new);
                    ctx.init_write(w, tgt, size);
                }
                // Lenient: an atomic acquires without a fence after it (see README).
                sync_after(ctx, w, l, tgt, kind, race::Acquire::Now, *release);
                if tracing {
                    let after = if wrote { new } else { old };
                    let name = Some(atom_name(*op));
                    ctx.trace_access(
                        w,
                        l,
                        tgt,
                        *ty,
                        (old, Some(after)),
                        TraceOp::Atomic,
                        true,
                        name,
                    );
                }
                if let Some(d) = d {
                    w.regs[*d as usize * 32 + l] = old;
                }
            });
        }
        Op::Fence => {
            if let Some(r) = ctx.race.as_mut() {
                lanes!(exec, l, {
                    r.fence(w.slot * ctx.tpb + w.first + l as u32);
                });
            }
        }
        Op::Nop => {}
        Op::Builtin { func, args, ret } => {
            let ts = m.tparam_size as usize;
            let arg = |w: &Warp, l: usize, i: usize, size: usize| {
                args.get(i)
                    .map_or(0, |&o| rd_le(&w.tparam, l * ts + o as usize, size))
            };
            match func {
                Builtin::Vprintf => {
                    lanes!(exec, l, {
                        let n = ctx.printf(w, l, arg(w, l, 0, 8), arg(w, l, 1, 8));
                        if let Some(r) = ret {
                            wr_le(&mut w.tparam, l * ts + *r as usize, 4, n as u32 as u64);
                        }
                    });
                }
                Builtin::AssertFail => {
                    if exec != 0 {
                        let mut messages = Vec::new();
                        lanes!(exec, l, {
                            messages.push(FailedAssert {
                                lane: l,
                                message: ctx.cstr(w, l, arg(w, l, 0, 8)),
                                file: ctx.cstr(w, l, arg(w, l, 1, 8)),
                                line: arg(w, l, 2, 4) as u32,
                                function: ctx.cstr(w, l, arg(w, l, 3, 8)),
                            });
                        });
                        ctx.assert_failed(w, pc, exec, messages);
                        return None;
                    }
                }
                Builtin::Malloc => {
                    lanes!(exec, l, {
                        let p = ctx.malloc(w, l, arg(w, l, 0, 8), pc);
                        if let Some(r) = ret {
                            wr_le(&mut w.tparam, l * ts + *r as usize, 8, p);
                        }
                    });
                }
                Builtin::Free => {
                    lanes!(exec, l, {
                        ctx.free(w, l, arg(w, l, 0, 8), pc);
                    });
                }
            }
        }
        Op::Activemask { d } => {
            let d = *d as usize * 32;
            lanes!(exec, l, {
                w.regs[d + l] = active as u64;
            });
        }
        Op::Bra { target } => {
            let target = *target;
            if exec == active {
                if target <= pc {
                    backward_branch(w);
                }
                w.pc = target;
                if w.active != w.runnable() {
                    w.regroup();
                }
            } else if exec == 0 {
                w.advance();
            } else {
                w.flush();
                lanes!(active, l, {
                    w.lane_pc[l] = if exec & (1 << l) != 0 { target } else { pc + 1 };
                });
                w.active = 0;
                w.regroup();
            }
            return None;
        }
        Op::Call {
            func,
            args,
            rets: _,
        } => {
            let callee = m.funcs.get(*func as usize);
            let start = callee.map(|f| f.start).unwrap_or(pc + 1);
            let ts = m.tparam_size as usize;
            if let Some(callee) = callee.filter(|f| f.recursive) {
                let mut overflow = 0u32;
                lanes!(exec, l, {
                    if w.stacks[l].len() >= MAX_CALL_DEPTH {
                        overflow |= 1 << l;
                    } else {
                        let frame = ctx.save_frame(w, l, callee);
                        w.frames[l].push(frame);
                    }
                });
                if overflow != 0 {
                    ctx.stack_overflow(w, overflow, pc);
                    return None;
                }
            }
            lanes!(exec, l, {
                for &(from, to, size) in args {
                    let (from, to, size) =
                        (l * ts + from as usize, l * ts + to as usize, size as usize);
                    if from + size <= w.tparam.len() && to + size <= w.tparam.len() {
                        w.tparam.copy_within(from..from + size, to);
                    }
                }
                w.stacks[l].push(pc);
            });
            set_lane_pcs(w, exec, start, pc + 1);
            return None;
        }
        Op::Ret => {
            let mut exiting = 0u32;
            let ts = m.tparam_size as usize;
            w.flush();
            lanes!(exec, l, {
                match w.stacks[l].pop() {
                    None => exiting |= 1 << l,
                    Some(cpc) => {
                        if let Some(Instr {
                            op: Op::Call { rets, func, .. },
                            ..
                        }) = m.code.get(cpc as usize)
                        {
                            // Results leave the callee's area before a saved frame (which may
                            // cover the caller's result slots, in self-recursion) comes back.
                            let mut results = Vec::new();
                            for &(from, to, size) in rets {
                                let from = l * ts + from as usize;
                                if let Some(bytes) = w.tparam.get(from..from + size as usize) {
                                    results.push((to, bytes.to_vec()));
                                }
                            }
                            if let Some(callee) =
                                m.funcs.get(*func as usize).filter(|f| f.recursive)
                                && let Some(frame) = w.frames[l].pop()
                            {
                                ctx.restore_frame(w, l, callee, frame);
                            }
                            for (to, bytes) in results {
                                let to = l * ts + to as usize;
                                if let Some(slot) = w.tparam.get_mut(to..to + bytes.len()) {
                                    slot.copy_from_slice(&bytes);
                                }
                            }
                        }
                        w.lane_pc[l] = cpc + 1;
                    }
                }
            });
            lanes!(active & !exec, l, {
                w.lane_pc[l] = pc + 1;
            });
            w.active = 0;
            if exiting != 0 {
                return exit_lanes(ctx, blocks, w, exiting, pc);
            }
            w.regroup();
            return None;
        }
        Op::Unsupported(what) => {
            if ctx.refusal.is_none() {
                ctx.refusal = Some(ctx.m.refusal(pc, what));
            }
            ctx.aborted = true;
            w.active = 0;
            return None;
        }
        Op::Trap => {
            if exec != 0 {
                ctx.trapped(w, pc, exec);
                return None;
            }
            w.advance();
            return None;
        }
        Op::Exit => {
            w.flush();
            lanes!(active & !exec, l, {
                w.lane_pc[l] = pc + 1;
            });
            w.active = 0;
            return exit_lanes(ctx, blocks, w, exec, pc);
        }
        Op::Bar {
            kind,
            id,
            count,
            p,
            d,
        } => {
            if exec == 0 {
                w.advance();
                return None;
            }
            let first = exec.trailing_zeros() as usize;
            let id = (ctx.get(w, *id, first) & 15) as u8;
            let cnt = count.map(|c| ctx.get(w, c, first) as u32);
            let blk = &mut blocks[w.slot as usize];
            let bar = &mut blk.bars[id as usize];
            let n = exec.count_ones();
            bar.arrived += n;
            if cnt.is_some() {
                bar.expected = cnt;
            }
            bar.red_dest |= d.is_some();
            let gid = ctx.gid(w, first);
            match bar.sites.iter_mut().find(|s| s.0 == pc) {
                Some(s) => s.1 += n,
                None => bar.sites.push((pc, n, gid)),
            }
            if let Some((pv, neg)) = p {
                lanes!(exec, l, {
                    if (ctx.get(w, *pv, l) & 1 != 0) != *neg {
                        bar.red += 1;
                    }
                });
            }
            w.flush();
            lanes!(active, l, {
                w.lane_pc[l] = pc + 1;
            });
            if *kind != BarKind::Arrive {
                lanes!(exec, l, {
                    w.bar_id[l] = id;
                });
                w.blocked |= exec;
                if let Some(t) = ctx.trace.as_deref_mut() {
                    t.barrier_arrival(id);
                }
            }
            w.active = 0;
            w.regroup();
            return Some(w.slot);
        }
        Op::BarWarp { mask }
        | Op::Shfl { mask, .. }
        | Op::Vote { mask, .. }
        | Op::Match { mask, .. }
        | Op::Redux { mask, .. } => {
            let (mk, lane_masks) = ctx.warp_masks(w, *mask, pc, &ins.op);
            let members = collective_ready(ctx, w, pc, mk, &lane_masks, &ins.op)?;
            // Lanes of `members` may wait at other instructions of the same kind (sm_70 and later
            // let different `__syncwarp()`s, or shuffles with the same mode and mask, meet):
            // each runs its own instruction's operands.
            let mut lane_at = [pc; 32];
            lanes!(members & !active, l, {
                lane_at[l] = w.lane_pc[l];
            });
            let op_of =
                |l: usize| -> &Op { m.code.get(lane_at[l] as usize).map_or(&ins.op, |i| &i.op) };
            match &ins.op {
                Op::Shfl { .. } => {
                    let mut src = [0u64; 32];
                    lanes!(w.live, l, {
                        let own = if members & (1 << l) != 0 {
                            op_of(l)
                        } else {
                            &ins.op
                        };
                        if let Op::Shfl { a, .. } = own {
                            src[l] = ctx.get(w, *a, l);
                        }
                    });
                    let exec = (recompute_exec(w, ins.guard) & active) | (members & !active);
                    lanes!(exec, l, {
                        if let Op::Shfl {
                            mode, d, dp, b, c, ..
                        } = op_of(l)
                        {
                            let (j, ok) =
                                shfl_source(*mode, l, ctx.get(w, *b, l), ctx.get(w, *c, l));
                            w.regs[*d as usize * 32 + l] = alu::mask(src[j], 32);
                            if let Some(dp) = dp {
                                w.regs[*dp as usize * 32 + l] = ok as u64;
                            }
                        }
                    });
                }
                Op::Vote { .. } => {
                    let exec = (recompute_exec(w, ins.guard) & active) | (members & !active);
                    let mut ballot = 0u32;
                    lanes!(exec, l, {
                        if let Op::Vote { p, neg, .. } = op_of(l)
                            && (ctx.get(w, *p, l) & 1 != 0) != *neg
                        {
                            ballot |= 1 << l;
                        }
                    });
                    lanes!(exec, l, {
                        if let Op::Vote { mode, d, .. } = op_of(l) {
                            let v = match mode {
                                VoteMode::All => (ballot == exec) as u64,
                                VoteMode::Any => (ballot != 0) as u64,
                                VoteMode::Uni => (ballot == 0 || ballot == exec) as u64,
                                VoteMode::Ballot => ballot as u64,
                            };
                            w.regs[*d as usize * 32 + l] = v;
                        }
                    });
                }
                Op::Match { .. } => {
                    let exec = (recompute_exec(w, ins.guard) & active) | (members & !active);
                    let mut values = [0u64; 32];
                    lanes!(exec, l, {
                        if let Op::Match { a, ty, .. } = op_of(l) {
                            values[l] = alu::mask(ctx.get(w, *a, l), ty.bits());
                        }
                    });
                    let same_as = |lane: usize| {
                        let mut same = 0u32;
                        lanes!(exec, k, {
                            if values[k] == values[lane] {
                                same |= 1 << k;
                            }
                        });
                        same
                    };
                    let uniform = exec == 0 || same_as(exec.trailing_zeros() as usize) == exec;
                    lanes!(exec, l, {
                        if let Op::Match { all, d, dp, .. } = op_of(l) {
                            w.regs[*d as usize * 32 + l] = if !*all {
                                u64::from(same_as(l))
                            } else if uniform {
                                u64::from(exec)
                            } else {
                                0
                            };
                            if let Some(dp) = dp {
                                w.regs[*dp as usize * 32 + l] = u64::from(uniform);
                            }
                        }
                    });
                }
                Op::Redux { .. } => {
                    let exec = (recompute_exec(w, ins.guard) & active) | (members & !active);
                    let signed = matches!(&ins.op, Op::Redux { ty: Ty::S32, .. });
                    let mut result: Option<u32> = None;
                    lanes!(exec, l, {
                        if let Op::Redux { op, a, .. } = op_of(l) {
                            let v = ctx.get(w, *a, l) as u32;
                            result = Some(match result {
                                None => v,
                                Some(r) => match op {
                                    ReduxOp::Add => r.wrapping_add(v),
                                    ReduxOp::Min if signed => (r as i32).min(v as i32) as u32,
                                    ReduxOp::Max if signed => (r as i32).max(v as i32) as u32,
                                    ReduxOp::Min => r.min(v),
                                    ReduxOp::Max => r.max(v),
                                    ReduxOp::And => r & v,
                                    ReduxOp::Or => r | v,
                                    ReduxOp::Xor => r ^ v,
                                },
                            });
                        }
                    });
                    let r = u64::from(result.unwrap_or(0));
                    lanes!(exec, l, {
                        if let Op::Redux { d, .. } = op_of(l) {
                            w.regs[*d as usize * 32 + l] = r;
                        }
                    });
                }
                _ => {}
            }
            let mut threads = Vec::new();
            if ctx.race.is_some() {
                lanes!(members, l, {
                    threads.push(ctx.who(w, l));
                });
            }
            if let Some(r) = ctx.race.as_mut() {
                if matches!(ins.op, Op::BarWarp { .. }) {
                    r.warp_sync(w.gw, &threads);
                } else {
                    r.share_acquired(&threads);
                }
            }
            if members & !active == 0 {
                w.advance();
                return None;
            }
            w.flush();
            lanes!(members, l, {
                w.lane_pc[l] = lane_at[l] + 1;
            });
            w.active = 0;
            w.regroup();
            return None;
        }
    }
    w.advance();
    None
}

fn recompute_exec(w: &Warp, guard: Option<(u32, bool)>) -> u32 {
    match guard {
        None => w.active,
        Some((p, neg)) => {
            let mut e = 0u32;
            lanes!(w.active, l, {
                if (w.regs[p as usize * 32 + l] & 1 != 0) != neg {
                    e |= 1 << l;
                }
            });
            e
        }
    }
}

/// Which lane a shuffle reads for lane `l` (`b` the lane, offset or xor mask, `c` the clamp and
/// segment mask), and whether it is in range (else the lane reads its own value).
fn shfl_source(mode: ShflMode, l: usize, b: u64, c: u64) -> (usize, bool) {
    let bv = (b & 31) as i64;
    let clamp = (c & 31) as i64;
    let seg = ((c >> 8) & 31) as i64;
    let lane = l as i64;
    let max_lane = (lane & seg) | (clamp & !seg);
    let min_lane = lane & seg;
    let (j, ok) = match mode {
        ShflMode::Up => (lane - bv, lane - bv >= max_lane),
        ShflMode::Down => (lane + bv, lane + bv <= max_lane),
        ShflMode::Bfly => (lane ^ bv, (lane ^ bv) <= max_lane),
        ShflMode::Idx => (min_lane | (bv & !seg), (min_lane | (bv & !seg)) <= max_lane),
    };
    (if ok { (j & 31) as usize } else { l }, ok)
}

/// Two warp-synchronous instructions that meet each other: the same kind and mode.
fn same_collective(a: &Op, b: &Op) -> bool {
    match (a, b) {
        (Op::BarWarp { .. }, Op::BarWarp { .. }) => true,
        (Op::Shfl { mode: x, .. }, Op::Shfl { mode: y, .. }) => x == y,
        (Op::Vote { mode: x, .. }, Op::Vote { mode: y, .. }) => x == y,
        (Op::Match { all: x, ty: s, .. }, Op::Match { all: y, ty: t, .. }) => x == y && s == t,
        (Op::Redux { op: x, ty: s, .. }, Op::Redux { op: y, ty: t, .. }) => x == y && s == t,
        _ => false,
    }
}

/// Warp-synchronous instructions wait until every live lane of `mask` is at a matching
/// instruction; then they run together and this returns the lanes that take part (the active
/// group plus the lanes that waited). Otherwise the active lanes wait, remembering their mask.
fn collective_ready(
    ctx: &mut Ctx,
    w: &mut Warp,
    pc: u32,
    mask: u32,
    lane_masks: &[u32; 32],
    op: &Op,
) -> Option<u32> {
    let need = mask & w.live;
    let mut here = 0u32;
    let mut other_mask = 0u32;
    lanes!(w.blocked & w.wsync_wait & need, l, {
        let waits_at = ctx.m.code.get(w.lane_pc[l] as usize);
        if waits_at.is_some_and(|i| same_collective(&i.op, op)) {
            here |= 1 << l;
            let waited_with = w.wsync_mask[l];
            let mut conflict = false;
            lanes!(w.active, a, {
                conflict |= masks_conflict(lane_masks[a], waited_with);
            });
            if conflict {
                other_mask |= 1 << l;
            }
        }
    });
    if need & !(w.active | here) == 0 {
        if other_mask != 0 {
            let first = w.active.trailing_zeros() as usize;
            let own = lane_masks.get(first).copied().unwrap_or(mask);
            ctx.report_mask_mismatch(w, pc, w.active, own, other_mask);
        }
        w.blocked &= !here;
        w.wsync_wait &= !here;
        return Some(w.active | here);
    }
    w.flush();
    lanes!(w.active, l, {
        w.wsync_mask[l] = lane_masks[l];
    });
    w.blocked |= w.active;
    w.wsync_wait |= w.active;
    w.active = 0;
    w.regroup();
    None
}

/// Two lanes' masks for one warp-synchronous call disagree: they differ and share a lane.
/// Disjoint masks name separate groups, which need not agree.
fn masks_conflict(a: u32, b: u32) -> bool {
    a != b && a & b != 0
}

/// The CUDA name of a warp-synchronous instruction, for reports.
fn collective_name(op: &Op) -> &'static str {
    match op {
        Op::BarWarp { .. } => "__syncwarp",
        Op::Shfl { mode, .. } => match mode {
            ShflMode::Idx => "__shfl_sync",
            ShflMode::Up => "__shfl_up_sync",
            ShflMode::Down => "__shfl_down_sync",
            ShflMode::Bfly => "__shfl_xor_sync",
        },
        Op::Vote { mode, .. } => match mode {
            VoteMode::All => "__all_sync",
            VoteMode::Any => "__any_sync",
            VoteMode::Uni => "__uni_sync",
            VoteMode::Ballot => "__ballot_sync",
        },
        Op::Match { all: false, .. } => "__match_any_sync",
        Op::Match { all: true, .. } => "__match_all_sync",
        Op::Redux { op, .. } => match op {
            ReduxOp::Add => "__reduce_add_sync",
            ReduxOp::Min => "__reduce_min_sync",
            ReduxOp::Max => "__reduce_max_sync",
            ReduxOp::And => "__reduce_and_sync",
            ReduxOp::Or => "__reduce_or_sync",
            ReduxOp::Xor => "__reduce_xor_sync",
        },
        _ => "a warp-synchronous call",
    }
}

fn set_lane_pcs(w: &mut Warp, exec: u32, target: u32, fallthrough: u32) {
    if exec == w.active {
        w.pc = target;
        if w.active != w.runnable() {
            w.regroup();
        }
        return;
    }
    w.flush();
    lanes!(w.active, l, {
        w.lane_pc[l] = if exec & (1 << l) != 0 {
            target
        } else {
            fallthrough
        };
    });
    w.active = 0;
    w.regroup();
}

/// Independent thread scheduling: a diverged group that keeps looping while other lanes wait
/// eventually lets one of them run (otherwise a lane spinning on a lock held by a lane of the
/// same warp would livelock, as it did before Volta).
fn backward_branch(w: &mut Warp) {
    let runnable = w.runnable();
    if let Some(f) = w.favored
        && w.active & (1 << f) != 0
    {
        w.favored = None;
        w.spin = 0;
        return;
    }
    if w.active == runnable {
        return;
    }
    w.spin += 1;
    if w.spin >= SPIN_LIMIT {
        w.spin = 0;
        let others = runnable & !w.active;
        let mut best: Option<(u32, u8)> = None;
        lanes!(others, l, {
            let p = w.lane_pc[l];
            if best.is_none_or(|b| p < b.0) {
                best = Some((p, l as u8));
            }
        });
        w.favored = best.map(|b| b.1);
    }
}

fn exit_lanes(
    ctx: &mut Ctx,
    blocks: &mut [BlockState],
    w: &mut Warp,
    lanes_mask: u32,
    pc: u32,
) -> Option<u32> {
    let lanes_mask = lanes_mask & w.live;
    w.flush();
    w.live &= !lanes_mask;
    w.active = 0;
    let n = lanes_mask.count_ones();
    if n > 0
        && let Some(t) = ctx.trace.as_deref_mut()
    {
        t.exit(lanes_mask);
    }
    if n > 0 {
        ctx.progress += 1;
        let first = ctx.gid(w, lanes_mask.trailing_zeros() as usize);
        let blk = &mut blocks[w.slot as usize];
        blk.live -= n;
        blk.exited += n;
        if blk.first_exit.is_none() {
            blk.first_exit = Some((first, pc));
        }
    }
    w.regroup();
    if n > 0 { Some(w.slot) } else { None }
}

fn sync_after(
    ctx: &mut Ctx,
    w: &Warp,
    l: usize,
    tgt: Tgt,
    kind: race::Kind,
    acquire: race::Acquire,
    release: bool,
) {
    if matches!(tgt, Tgt::G(..)) {
        ctx.touched_global_sync = true;
    }
    let Some((region, word)) = ctx.sync_region(tgt, w) else {
        return;
    };
    let who = ctx.who(w, l);
    if let Some(r) = ctx.race.as_mut() {
        r.sync_op(region, word, &who, kind, acquire, release);
    }
}

fn atom_op(op: AtomOp, ty: Ty, old: u64, b: u64, c: u64) -> (u64, bool) {
    let bits = ty.bits();
    let v = match op {
        AtomOp::Add => match ty {
            Ty::F32 => (f32::from_bits(old as u32) + f32::from_bits(b as u32)).to_bits() as u64,
            Ty::F64 => (f64::from_bits(old) + f64::from_bits(b)).to_bits(),
            // `.noftz`: subnormal halves stay, rounding to nearest as `add.rn.f16` does.
            Ty::F16 | Ty::BF16 => alu::bin(BinOp::Add, ty, old, b, FMod::default()),
            _ => alu::mask(old.wrapping_add(b), bits),
        },
        AtomOp::AddPacked(half) => {
            alu::half2(Half2Op::Bin(BinOp::Add), half, FMod::default(), old, b, 0)
        }
        AtomOp::Min | AtomOp::Max => {
            let fm = FMod::default();
            let bop = if op == AtomOp::Min {
                BinOp::Min
            } else {
                BinOp::Max
            };
            alu::bin(bop, ty, old, b, fm)
        }
        AtomOp::Inc => {
            let (o, b) = (alu::mask(old, bits), alu::mask(b, bits));
            if o >= b { 0 } else { o + 1 }
        }
        AtomOp::Dec => {
            let (o, b) = (alu::mask(old, bits), alu::mask(b, bits));
            if o == 0 || o > b { b } else { o - 1 }
        }
        AtomOp::And => old & b,
        AtomOp::Or => old | b,
        AtomOp::Xor => old ^ b,
        AtomOp::Exch => b,
        AtomOp::Cas => {
            if alu::mask(old, bits) == alu::mask(b, bits) {
                c
            } else {
                return (old, false);
            }
        }
    };
    (alu::mask(v, bits), true)
}

/// `1 byte`, `4 bytes`: sizes as the reports write them.
fn bytes(count: u64) -> String {
    if count == 1 {
        "1 byte".into()
    } else {
        format!("{count} bytes")
    }
}

#[cfg(test)]
mod byte_count_tests {
    #[test]
    fn one_byte_is_singular() {
        assert_eq!(super::bytes(1), "1 byte");
        assert_eq!(super::bytes(0), "0 bytes");
        assert_eq!(super::bytes(4), "4 bytes");
    }
}
