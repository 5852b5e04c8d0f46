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
#[cfg(test)]
mod alu_directed_tests;
mod banks;
mod cas_seed;
#[cfg(test)]
mod committed;
#[cfg(test)]
mod committed_engines;
mod compiled;
mod contract;
mod error;
mod exact;
mod exec;
pub mod interrupt;
mod ir;
mod lex;
mod link;
mod load;
mod memory_model;
mod module;
pub mod occupancy;
mod options;
mod parse;
mod poll;
mod printf;
pub mod ptxas;
mod push;
mod race;
mod regalloc;
mod report;
pub mod run_env;
mod shared_base;
mod source_loc;
mod spin;
mod stretch;
mod trace;

pub use banks::{BANKS, BankConflicts, warp_access};

pub use compiled::{ENGINE_ENV, Engine};
pub use error::EmuError;
pub use exec::allocs::{DEFAULT_HEAP_BYTES, DevicePtr};
pub use exec::args::{KernelArg, LaunchConfig};
pub use exec::devices::{EventId, StreamId};
pub use exec::emulator::Emulator;
pub use exec::timing::{KernelTally, LaunchTimings, ThreadBusy};
pub use memory_model::MemoryModel;
pub use module::Module;
pub use options::{
    AUTO_COMPILED_THREADS, DEFAULT_PRINTF_BUFFER_BYTES, DEFAULT_SHARED_LIMIT, DEFAULT_STEP_BUDGET,
    DEFAULT_WATCHDOG_WINDOW, RunOptions, Schedule, THREADS_ENV,
};
pub use parse::function_display_name;
pub use report::{
    Access, AccessOp, ConditionSet, Finding, FindingKind, Hazard, MemLocation, OutputStream,
    PrintfRecord, Quoted, RunReport, SourceLines, SourceLoc, Space, ThreadGroup, ThreadRef,
    WarpSyncProblem,
};
pub use trace::{
    EventLane, LaneAccess, MAX_INITIAL_BYTES, Trace, TraceAccess, TraceArray, TraceEvent,
    TraceInstr, TraceOp, TraceWarp,
};
