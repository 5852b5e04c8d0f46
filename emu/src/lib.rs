//! `ptx-emu`: runs the PTX that NVRTC emits for Racetrack's kernels on the CPU, with a race
//! checker (shared and global memory), a barrier and warp-sync checker (divergence, deadlock,
//! bad masks), a memory checker (out of bounds, misaligned, the device heap), device `printf`
//! and `assert`, and a watchdog for kernels that are stuck.
//!
//! ```no_run
//! use ptx_emu::*;
//! # fn main() -> Result<(), EmuError> {
//! let module = Module::parse(include_str!("../tests/corpus/tree_reduce.ptx"))?;
//! let mut emu = Emulator::new();
//! let x = emu.alloc(4, "x");
//! let report = emu.launch(
//!     &module,
//!     "tree_reduce",
//!     &LaunchConfig { grid: [1, 1, 1], block: [32, 1, 1], dynamic_shared_bytes: 128 },
//!     &[KernelArg::Ptr(x), KernelArg::Ptr(x), KernelArg::I32(0)],
//!     &RunOptions::default(),
//! )?;
//! for f in &report.findings {
//!     println!("{f}");
//! }
//! # Ok(()) }
//! ```
//!
//! See `emu/README.md` for the execution model and what the checkers can and cannot tell you.

mod alu;
mod banks;
mod cas_seed;
#[cfg(test)]
mod committed;
mod error;
mod exec;
mod ir;
mod lex;
mod load;
mod memory_model;
mod module;
mod parse;
mod poll;
mod printf;
mod race;
mod regalloc;
mod report;
mod stretch;
mod trace;

pub use banks::{BANKS, BankConflicts, warp_access};

pub use error::EmuError;
pub use exec::{
    DEFAULT_HEAP_BYTES, DEFAULT_PRINTF_BUFFER_BYTES, DEFAULT_STEP_BUDGET, DEFAULT_WATCHDOG_WINDOW,
    DevicePtr, Emulator, EventId, KernelArg, LaunchConfig, RunOptions, Schedule, StreamId,
    THREADS_ENV,
};
pub use memory_model::MemoryModel;
pub use module::Module;
pub use report::{
    Access, AccessOp, Finding, FindingKind, Hazard, MemLocation, PrintfRecord, RunReport,
    SourceLoc, Space, ThreadGroup, ThreadRef, WarpSyncProblem,
};
pub use trace::{
    EventLane, LaneAccess, MAX_INITIAL_BYTES, Trace, TraceAccess, TraceArray, TraceEvent,
    TraceInstr, TraceOp, TraceWarp,
};

/// How long a waiting thread spins before it sleeps: a round's other side is usually tens of
/// microseconds away, a race detector shard's next batch often not much more, and waking a
/// sleeping thread costs the waker a system call and can take that long again; on a machine with
/// more threads than cores (tests, other work) a sleeping thread gives its core away. 50 µs
/// saved the workspace's tests about 28 s, and cost checkers-off runs on 2 cores 1.5–4 %.
#[cfg(not(test))]
pub(crate) const SPIN: std::time::Duration = std::time::Duration::from_micros(200);
/// Tests share the cores with each other: a worker spinning through a round's detector batch
/// took the core another test needed (the emulator's unit tests went from 16 s to 35 s).
#[cfg(test)]
pub(crate) const SPIN: std::time::Duration = std::time::Duration::from_micros(10);

/// Polls `poll` until it gives something, for up to [`SPIN`]: what it gave, or `None` when
/// the time ran out first.
pub(crate) fn spin_for<T>(mut poll: impl FnMut() -> Option<T>) -> Option<T> {
    let start = std::time::Instant::now();
    loop {
        for _ in 0..64 {
            if let Some(value) = poll() {
                return Some(value);
            }
            std::hint::spin_loop();
        }
        if start.elapsed() > SPIN {
            return None;
        }
    }
}

/// `v.push(value)`, written where the element goes. On the hot paths `Vec::push` was not
/// inlined: the value was built on the stack and copied into the vector with wider loads than
/// the stores that built it, which stalls (the race detector's batch, a store's lane list).
#[inline(always)]
pub(crate) fn push_in_place<T>(v: &mut Vec<T>, value: T) {
    v.reserve(1);
    if let Some(slot) = v.spare_capacity_mut().first_mut() {
        slot.write(value);
        // SAFETY: the element just past the length was written above.
        unsafe { v.set_len(v.len() + 1) };
    }
}
