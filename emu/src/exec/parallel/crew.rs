//! The launch's workers: the crew, its jobs and their counts, how a worker waits and is woken.

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use super::board::{Board, OwnLine};
use crate::exec::ctx::Ctx;
use crate::exec::plan::RoundCount;
use crate::exec::timing::WorkerClocks;
use crate::exec::views::BlockViews;
use crate::race;

/// What a worker is given for a turn (one round or a stretch of them), and gives back.
#[derive(Default)]
pub(super) struct Job {
    /// The turn's blocks, and the worker's share of them, which it runs first (see
    /// [`run_share`]).
    pub(super) board: Option<Arc<Board>>,
    pub(super) share: std::ops::Range<usize>,
    /// The resident blocks' memory, when slots were added since the last round.
    pub(super) views: Option<BlockViews>,
    /// Emptied race-detector logs lent by the pipe, for the blocks' calls.
    pub(super) spares: Vec<Vec<race::Call>>,
    /// When the launch handed the job out, for the time the worker took to start it.
    pub(super) given: Option<std::time::Instant>,
    /// Over the launch: the worker's time running its blocks, waiting for other shares' blocks
    /// to move, and starting turns after the launch handed them out.
    pub(super) busy: std::time::Duration,
    pub(super) held_up: std::time::Duration,
    pub(super) starting: std::time::Duration,
    /// The turn's counters, taken out of its blocks' outcomes by the worker.
    pub(super) counts: Counts,
}

/// What blocks did that adds up in any order: taken out of their outcomes where they ran, so
/// that the launch can plan the next turn before it joins the rest.
#[derive(Default, Clone, Copy)]
pub(super) struct Counts {
    pub(super) thread_instrs: u64,
    pub(super) thread_steps: u64,
    pub(super) clock: u64,
    pub(super) progress: u64,
    pub(super) aborted: bool,
    pub(super) touched_global_sync: bool,
    /// Of the share's own blocks once the turn settled (see [`end_turns`]): the
    /// thread-instructions, steps and progress of the rounds they ran past the turn's end, which
    /// the launch leaves out until its rounds reach them, and how many rounds those are; and
    /// whether a warp of theirs ran in the turn's last round.
    pub(super) ahead: RoundCount,
    pub(super) rounds_ahead: u64,
    pub(super) ran_last: bool,
}

impl Counts {
    /// Takes the counters a worker's blocks left in its context.
    pub(super) fn take(&mut self, ctx: &mut Ctx) {
        self.thread_instrs += std::mem::take(&mut ctx.thread_instrs);
        self.thread_steps += std::mem::take(&mut ctx.thread_steps);
        self.clock += std::mem::take(&mut ctx.clock);
        self.progress += std::mem::take(&mut ctx.progress);
        self.aborted |= std::mem::take(&mut ctx.aborted);
        self.touched_global_sync |= std::mem::take(&mut ctx.touched_global_sync);
    }

    /// Adds what another share found of its own blocks as the turn ended (see [`end_turns`]).
    pub(super) fn add_ended(&mut self, other: &Counts) {
        self.ahead.add(&other.ahead);
        self.rounds_ahead += other.rounds_ahead;
        self.ran_last |= other.ran_last;
    }
}

/// The launch's workers: each runs some of a round's blocks, the same slots round after round
/// while it can (their warps stay in its core's cache), with a `Ctx` of its own.
pub(crate) struct Crew {
    /// Bumped to start a round; `u64::MAX` sends the workers home.
    pub(super) round: OwnLine<AtomicU64>,
    pub(super) done: OwnLine<AtomicUsize>,
    pub(super) jobs: Vec<OwnLine<Mutex<Job>>>,
    /// The kernel's first instruction, where the blocks the workers prepare start.
    pub(super) entry: u32,
    /// A worker panicked: the launch must not wait for it.
    pub(super) failed: AtomicBool,
    /// The launch's thread, and the workers' once they have started: who to wake.
    pub(super) launch: std::thread::Thread,
    pub(super) workers: Mutex<Vec<std::thread::Thread>>,
    /// Times a share found nothing to run and waited for the others' blocks.
    pub(super) waits: AtomicU64,
    /// How long the launch's thread spins for a turn's end when it runs no share.
    pub(super) launch_spin: std::time::Duration,
    /// Segments of blocks a share ran for another share (see [`Board`]), and segments that
    /// stopped at [`SEGMENT_ROUNDS`](super::board::SEGMENT_ROUNDS) with rounds left to run.
    pub(super) taken_over: AtomicU64,
    pub(super) cut_short: AtomicU64,
    /// Rounds on which every block of a turn stopped and the shares let them run together.
    pub(super) met: AtomicU64,
}

/// Tells the launch when its worker panics.
pub(super) struct PanicAlarm<'c>(pub(super) &'c Crew);

impl Drop for PanicAlarm<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.0.failed.store(true, Ordering::Release);
            // The launch, and shares waiting for others' blocks, give up.
            self.0.wake_everyone();
        }
    }
}

/// Waits until `ready` holds: spinning for up to [`crate::spin::SPIN`], then sleeping until woken
/// (whoever makes it hold wakes the waiter; a spurious wake-up only checks again).
pub(super) fn wait_until(ready: impl Fn() -> bool) {
    wait_spinning(crate::spin::SPIN, ready);
}

/// [`wait_until`], spinning for up to `spin`.
pub(super) fn wait_spinning(spin: std::time::Duration, ready: impl Fn() -> bool) {
    if crate::spin::spin_for_up_to(spin, || ready().then_some(())).is_some() {
        return;
    }
    while !ready() {
        std::thread::park();
    }
}

/// The most emptied race-detector logs a worker keeps from one turn to the next. A share's
/// blocks use about one a block and round that makes calls; kept without a bound, the logs lent
/// and not used piled up on some workers (on four workers of the 4 M launch, 6,301 on one and
/// none on another), and freeing them made the launch's end wait 2–7 ms.
pub(super) const KEPT_LOGS: usize = 128;

impl Crew {
    /// A crew of `workers` for a launch whose kernel starts at `entry`. When the machine has a
    /// core for each of the launch's `threads`, the launch's thread, free of shares, spins through
    /// a turn (see [`crate::spin::TURN_SPIN`]); with fewer, it sleeps soon, leaving its core to
    /// the workers.
    pub(crate) fn new(workers: usize, entry: u32, threads: usize) -> Crew {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        let launch_spin = if cores >= threads {
            crate::spin::TURN_SPIN
        } else {
            crate::spin::SPIN
        };
        Crew {
            round: OwnLine(AtomicU64::new(0)),
            done: OwnLine(AtomicUsize::new(0)),
            jobs: (0..workers)
                .map(|_| OwnLine(Mutex::new(Job::default())))
                .collect(),
            entry,
            failed: AtomicBool::new(false),
            launch: std::thread::current(),
            workers: Mutex::new(Vec::with_capacity(workers)),
            waits: AtomicU64::new(0),
            launch_spin,
            taken_over: AtomicU64::new(0),
            cut_short: AtomicU64::new(0),
            met: AtomicU64::new(0),
        }
    }

    /// Wakes the launch's thread and every worker that sleeps waiting.
    fn wake_everyone(&self) {
        self.launch.unpark();
        let workers = self.workers.lock().unwrap_or_else(|e| e.into_inner());
        for worker in workers.iter() {
            worker.unpark();
        }
    }

    /// Starts a round (or, with `u64::MAX`, sends the workers home) and wakes them.
    pub(super) fn signal(&self, round: u64) {
        self.round.store(round, Ordering::Release);
        let workers = self.workers.lock().unwrap_or_else(|e| e.into_inner());
        for worker in workers.iter() {
            worker.unpark();
        }
    }

    pub(crate) fn dismiss(&self) {
        self.signal(u64::MAX);
    }

    /// Each worker's time so far: running blocks, waiting for others' blocks, starting turns.
    pub(crate) fn clocks(&self) -> Vec<WorkerClocks> {
        let clocks = |job: &OwnLine<Mutex<Job>>| {
            let job = job.lock().unwrap_or_else(|e| e.into_inner());
            WorkerClocks {
                busy: job.busy,
                held_up: job.held_up,
                starting: job.starting,
            }
        };
        self.jobs.iter().map(clocks).collect()
    }

    /// Times a share waited for others' blocks so far.
    pub(crate) fn waits(&self) -> u64 {
        self.waits.load(Ordering::Acquire)
    }

    /// Segments of blocks shares ran for others so far.
    pub(crate) fn taken_over(&self) -> u64 {
        self.taken_over.load(Ordering::Acquire)
    }

    /// Segments that stopped at [`SEGMENT_ROUNDS`](super::board::SEGMENT_ROUNDS) with rounds left, so far.
    pub(crate) fn cut_short(&self) -> u64 {
        self.cut_short.load(Ordering::Acquire)
    }

    /// Rounds the shares met on so far (see [`Board::settle`]).
    pub(crate) fn met(&self) -> u64 {
        self.met.load(Ordering::Acquire)
    }
}

/// Sends the crew home when dropped.
pub(crate) struct Dismissal<'c>(pub(crate) &'c Crew);

impl Drop for Dismissal<'_> {
    fn drop(&mut self) {
        self.0.dismiss();
    }
}
