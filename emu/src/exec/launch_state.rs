//! A launch in progress: its state, which the scheduler (`launch.rs`), the cores (`parallel/`),
//! the planner (`plan.rs`) and the watchdog (`watchdog.rs`) share.

use super::ctx::Ctx;
use super::timing::Clocks;
use super::views::BlockMemory;
use super::warp::{BlockState, Warp};

/// A launch in progress. Only resident blocks have state: block `b` runs in some *slot*, whose
/// warps are `warps[slot * wpb..]`, barriers `blocks[slot]`, shared memory `ctx.shared[slot]`;
/// a finished block's slot goes to the next block.
pub(crate) struct Launch<'a> {
    pub(crate) ctx: Ctx<'a>,
    pub(crate) entry_pc: u32,
    /// Per slot: its warps (register files are kept and reused by the slot's next block).
    pub(crate) warps: Vec<Warp>,
    /// Per slot.
    pub(crate) blocks: Vec<BlockState>,
    /// Per slot: shared memory and its initcheck bits, and the threads' local memory.
    pub(crate) memory: BlockMemory,
    pub(crate) nblocks: u64,
    /// Blocks the hardware schedule keeps running at once (grown only to keep progress).
    pub(crate) resident_blocks: u32,
    /// Blocks `0..started` have started.
    pub(crate) started: u64,
    pub(crate) free_slots: Vec<u32>,
    pub(crate) watchdog: Watchdog,
    /// Where the launch's thread spent its time (see `timing.rs`).
    pub(crate) clocks: Clocks,
    /// The race detector's share of the work its kernel's last launch measured, when the
    /// detector runs on the launch's thread: the launch takes fewer blocks of each turn.
    pub(crate) detector_here: Option<f64>,
    /// The blocks run on the launch's core, the race detector on another (see `launch.rs`).
    pub(crate) blocks_on_one_core: bool,
}

/// Tells a stuck kernel from a slow one. Every `RunOptions::watchdog_window` thread-steps (see
/// `Ctx::thread_steps`) it looks at the progress counter; after a window without progress it hashes the started
/// threads' registers, and when a further quiet window ends with the same hash, nothing is
/// changing anywhere: every thread waits for something that will not happen.
#[derive(Default)]
pub(crate) struct Watchdog {
    /// Thread-steps at which it looks next.
    pub(crate) next_check: u64,
    pub(crate) progress_seen: u64,
    /// Thread-instructions at the last check that saw progress.
    pub(crate) quiet_since: u64,
    pub(crate) registers: Option<u64>,
    pub(crate) stuck: bool,
}
