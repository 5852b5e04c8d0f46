//! How many cores a launch's rounds take, and how many rounds a turn may run before the launch
//! must look at itself again (the step budget, the watchdog, a stall).

use crate::exec::launch_state::Launch;
use crate::exec::plan::{RoundCount, rounds_unwatched};
use crate::ir::*;
use crate::race::Racecheck;

/// Below this many threads in a grid, starting the workers costs more than they save. Tests
/// start them for every launch, so that the corpus's small launches run in parallel too.
#[cfg(not(test))]
const MIN_PARALLEL_THREADS: u64 = 16 * 1024;
#[cfg(test)]
const MIN_PARALLEL_THREADS: u64 = 1;

/// Below this many warps with live lanes among the resident blocks, a round runs on the launch's
/// core: handing a turn to the workers and joining it back costs tens of microseconds, more than
/// a few warps' instructions take (a reduction whose blocks keep one thread each ran 3.5 times
/// slower on two cores than on one). Either way the launch ends as one core leaves it. Tests take
/// the launch's core for the last few warps of their small grids, so that both ways run.
#[cfg(not(test))]
pub(super) const MIN_PARALLEL_WARPS: u32 = 64;
#[cfg(test)]
pub(super) const MIN_PARALLEL_WARPS: u32 = 4;

/// Threads a race detector takes of a launch's `cores`. When blocks run on several cores: one
/// per 16 cores, and none below four, where it runs on the launch's own thread. Applying the
/// calls costs a few percent of running the blocks since runs are recorded together (a shard
/// of four at 16 threads was busy 3 % of the time a worker was; see BENCHMARK.md), so a core
/// given to the detector is mostly a core the blocks lose; on two cores a detector thread of
/// its own cost more in handing calls from core to core than it took off the interpreter.
/// When the same kernel's last launch measured the detector's share of the work (`measured`,
/// see [`LaunchTimings::detector_share`]), it takes that share of the cores, up to half: a
/// kernel that mostly copies memory gives the detector as much work as its blocks (40 % of a
/// sample's time on one core), and one shard then held back fifteen cores of blocks.
/// When blocks run on one core (the random schedules, traces, bank counting …), it takes a
/// quarter of the cores, and at least one of two or more.
///
/// [`LaunchTimings::detector_share`]: crate::LaunchTimings::detector_share
pub(crate) fn detector_shards(
    cores: usize,
    blocks_on_several: bool,
    measured: Option<f64>,
) -> usize {
    if blocks_on_several {
        if cores < 4 {
            return 0;
        }
        let least = cores.div_ceil(16);
        match measured {
            Some(share) if share.is_finite() => {
                ((cores as f64 * share).round() as usize).clamp(least, (cores / 2).max(least))
            }
            _ => least,
        }
    } else {
        (cores / 4).max(1).min(cores - 1)
    }
}

/// The most outcomes that may wait in line before a round on the launch's core joins them
/// first instead of lining up behind them: while turns run, the line is joined beside them; a
/// launch whose rounds all run on one core would otherwise keep every round's calls until its
/// end. Tests join sooner, so that both ways run.
#[cfg(not(test))]
pub(crate) const MOST_WAITING: usize = 16 * 1024;
#[cfg(test)]
pub(crate) const MOST_WAITING: usize = 4;

impl Launch<'_> {
    /// Workers for this launch's rounds besides its own core: one per core left when a piped
    /// race detector has its own; none when the launch must run on one core.
    pub(crate) fn crew_size(&self) -> usize {
        if !self.may_run_in_parallel() {
            return 0;
        }
        let cores = self.ctx.opts.cores();
        let detector = match &self.ctx.race {
            Some(Racecheck::Piped(pipe)) => pipe.threads(),
            _ => 0,
        };
        cores.saturating_sub(1 + detector)
    }

    /// Rounds the launch may run before it must look at itself again: before the watchdog's
    /// next look could come due (each round adds at most one step per resident thread), or a
    /// stall would start another block; and every one of them ending below the step budget,
    /// where steps end early (`Ctx::steps_end_at`), which only the launch's own count can tell
    /// (each round adds at most a step's instructions per resident thread). At least one, or
    /// none when the next round may reach the budget: it runs on the launch's core.
    pub(crate) fn rounds_unwatched(&self, resident: &[u32], stalled: u64, patience: u64) -> u32 {
        let until_stall = (self.started < self.nblocks).then(|| patience.saturating_sub(stalled));
        let threads = resident.len() as u64 * self.ctx.wpb as u64 * 32;
        // A thread's step runs up to the module's longest (`block::step`).
        let instrs_per_round = threads * self.ctx.m.longest_step as u64;
        let below_budget = self.ctx.opts.step_budget.saturating_sub(instrs_per_round);
        if self.ctx.thread_instrs >= below_budget {
            return 0;
        }
        let most = rounds_unwatched(
            until_stall,
            instrs_per_round,
            self.ctx.thread_instrs,
            below_budget,
        );
        let window = self.ctx.opts.watchdog_window;
        if window != 0 {
            // When something progressed since the watchdog's last look, its next one only notes
            // that, which the launch can do after the turn from the rounds' counts
            // ([`Launch::watchdog_rounds`]); the one after that may find the kernel stuck and
            // must see the blocks as they are.
            let next = if self.ctx.progress != self.watchdog.progress_seen {
                self.watchdog.next_check.saturating_add(window)
            } else {
                self.watchdog.next_check
            };
            return most.min(rounds_unwatched(
                until_stall,
                threads,
                self.ctx.thread_steps,
                next,
            ));
        }
        most
    }

    /// The watchdog's looks that fell inside a turn's rounds before its last, as one core would
    /// have made them after each round: `rounds` holds each round's thread-instructions, steps
    /// and progress, summed over the turn's blocks, and the turn started at `at`'s counts.
    /// Each such look finds progress since the one before (the turn was planned so
    /// that only its last round can reach a look that might not, see
    /// [`Launch::rounds_unwatched`]), and notes it; the last round's look is the launch's own.
    pub(super) fn watchdog_rounds(&mut self, rounds: &[RoundCount], mut at: RoundCount) {
        let window = self.ctx.opts.watchdog_window;
        if window == 0 || rounds.len() < 2 {
            return;
        }
        for round in &rounds[..rounds.len() - 1] {
            at.add(round);
            let watchdog = &mut self.watchdog;
            if at.steps >= watchdog.next_check {
                debug_assert_ne!(at.progress, watchdog.progress_seen);
                #[cfg(test)]
                WATCHDOG_LOOKS_IN_TURNS.with(|looks| looks.set(looks.get() + 1));
                watchdog.next_check = at.steps.saturating_add(window);
                watchdog.progress_seen = at.progress;
                watchdog.quiet_since = at.instrs;
                watchdog.registers = None;
            }
        }
    }

    /// Whether this launch's rounds may run on several cores at all.
    pub(crate) fn may_run_in_parallel(&self) -> bool {
        let ctx = &self.ctx;
        let m = ctx.m;
        // The heap's bump pointer, and a device launch's queue, are one per launch.
        let heap =
            m.calls_builtin(|f| matches!(f, Builtin::Malloc | Builtin::Free | Builtin::Cdp(_)));
        ctx.opts.cores() > 1
            && !self.blocks_on_one_core
            && self.nblocks > 1
            && self.nblocks * ctx.tpb as u64 >= MIN_PARALLEL_THREADS
            && ctx.trace.is_none()
            // A grid that may launch children checks them against its footprint cut at each
            // launch, which only one core's order gives.
            && ctx.op_check.as_ref().is_none_or(|check| check.segments.is_none())
            && ctx.banks.is_none()
            && !m.reads_clock
            && !heap
            && matches!(ctx.race, None | Some(Racecheck::Piped(_)))
    }
}

#[cfg(test)]
thread_local! {
    /// The watchdog's looks made from a turn's counts by this thread's launches.
    pub(super) static WATCHDOG_LOOKS_IN_TURNS: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
    /// Set: the launch joins nothing beside a turn, as a launch whose joins are slower than its
    /// blocks does.
    pub(super) static JOINS_FALL_BEHIND: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    /// The most turns this thread's launches have had waiting in line at once.
    pub(super) static MOST_TURNS_IN_LINE: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// Microseconds a share waits between finding another share's block runnable and taking it,
/// in tests: a share on a core the system took away for a while (more threads than cores).
/// Only crews of [`PAUSED_CREWS`] workers or more wait, so that the other tests, which run at
/// the same time on fewer threads, do not.
#[cfg(test)]
pub(super) static PAUSE_BEFORE_TAKING_OVER_US: std::sync::atomic::AtomicU64 =
    std::sync::atomic::AtomicU64::new(0);
#[cfg(test)]
pub(super) const PAUSED_CREWS: usize = 5;

#[cfg(test)]
pub(super) fn pause_before_taking_over(workers: usize) {
    let pause = PAUSE_BEFORE_TAKING_OVER_US.load(std::sync::atomic::Ordering::Relaxed);
    if pause > 0 && workers >= PAUSED_CREWS {
        std::thread::sleep(std::time::Duration::from_micros(pause));
    }
}
