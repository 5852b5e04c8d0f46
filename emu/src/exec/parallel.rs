//! Rounds of the hardware schedule on every core, leaving exactly what one core leaves.
//!
//! `plan.rs` decides which rounds may run apart: blocks that keep to themselves for a stretch,
//! or whose next instructions touch no 64-byte line of global memory that another block writes.
//! This file runs them: the workers, each with a share of the resident blocks and a `Ctx` of its
//! own; a block's turn (preparing a block that just started, then its rounds); and the join.
//! What order shows (findings, the race detector's calls) each block's turn keeps apart, round by
//! round, and the launch adds the turns up round by round in block order: the order of one core.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicU32, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use super::block;
use super::block::Step;
use super::collector::Collector;
use super::ctx::Ctx;
use super::launch_state::Launch;
use super::plan;
use super::plan::{Lead, LinedUp, Outcome, RoundCount, Rounds, Turn, Waiting, rounds_unwatched};
use super::timing::{Lap, WorkerClocks};
use super::views::{BlockViews, RawSlice};
use super::warp::{BlockState, Warp};
use crate::ir::*;
use crate::race;
use crate::race::Racecheck;

/// Below this many threads in a grid, starting the workers costs more than they save. Tests
/// start them for every launch, so that the corpus's small launches run in parallel too.
#[cfg(not(test))]
const MIN_PARALLEL_THREADS: u64 = 16 * 1024;
#[cfg(test)]
const MIN_PARALLEL_THREADS: u64 = 1;

/// Threads a race detector takes of a launch's `cores`. When blocks run on several cores: one
/// per 16 cores, and none below four, where it runs on the launch's own thread. Applying the
/// calls costs a few percent of running the blocks since runs are recorded together (a shard
/// of four at 16 threads was busy 3 % of the time a worker was; see BENCHMARK.md), so a core
/// given to the detector is mostly a core the blocks lose; on two cores a detector thread of
/// its own cost more in handing calls from core to core than it took off the interpreter.
/// When blocks run on one core (the random schedules, traces, bank counting …), it takes a
/// quarter of the cores, and at least one of two or more.
pub(crate) fn detector_shards(cores: usize, blocks_on_several: bool) -> usize {
    if blocks_on_several {
        if cores < 4 { 0 } else { cores.div_ceil(16) }
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

/// From this many workers on, the launch's thread runs no blocks of a turn: it joins the
/// previous turn's outcomes while the workers run this one (see [`Launch::parallel_rounds`]),
/// and with a block of its own that join would make it the turn's last core. Tests free it
/// from two, so that the corpus's launches on a few threads take both ways.
#[cfg(not(test))]
const WORKERS_FOR_A_FREE_LAUNCH: usize = 4;
#[cfg(test)]
const WORKERS_FOR_A_FREE_LAUNCH: usize = 2;

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

    /// Rounds the launch may run before it must look at itself again: before the step budget or
    /// the watchdog's next look could come due (each round adds at most a thread-instruction per
    /// resident thread), or a stall would start another block. At least one.
    pub(crate) fn rounds_unwatched(&self, resident: &[u32], stalled: u64, patience: u64) -> u32 {
        let until_stall = (self.started < self.nblocks).then(|| patience.saturating_sub(stalled));
        let per_round = resident.len() as u64 * self.ctx.wpb as u64 * 32;
        let mut due = self.ctx.opts.step_budget;
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
            due = due.min(next);
        }
        rounds_unwatched(until_stall, per_round, self.ctx.thread_instrs, due)
    }

    /// The watchdog's looks that fell inside a turn's rounds before its last, as one core would
    /// have made them after each round: `rounds` holds each round's thread-instructions and
    /// progress, summed over the turn's blocks, and the turn started at `instrs` and
    /// `progress`. Each such look finds progress since the one before (the turn was planned so
    /// that only its last round can reach a look that might not, see
    /// [`Launch::rounds_unwatched`]), and notes it; the last round's look is the launch's own.
    fn watchdog_rounds(&mut self, rounds: &[(u64, u64)], mut instrs: u64, mut progress: u64) {
        let window = self.ctx.opts.watchdog_window;
        if window == 0 || rounds.len() < 2 {
            return;
        }
        for &(round_instrs, round_progress) in &rounds[..rounds.len() - 1] {
            instrs += round_instrs;
            progress += round_progress;
            let watchdog = &mut self.watchdog;
            if instrs >= watchdog.next_check {
                debug_assert_ne!(progress, watchdog.progress_seen);
                #[cfg(test)]
                WATCHDOG_LOOKS_IN_TURNS.with(|looks| looks.set(looks.get() + 1));
                watchdog.next_check = instrs.saturating_add(window);
                watchdog.progress_seen = progress;
                watchdog.quiet_since = instrs;
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
            && self.nblocks > 1
            && self.nblocks * ctx.tpb as u64 >= MIN_PARALLEL_THREADS
            && ctx.trace.is_none()
            && ctx.op_check.is_none()
            && ctx.banks.is_none()
            && !m.reads_clock
            && !heap
            && matches!(ctx.race, None | Some(Racecheck::Piped(_)))
    }
}

#[cfg(test)]
thread_local! {
    /// The watchdog's looks made from a turn's counts by this thread's launches.
    static WATCHDOG_LOOKS_IN_TURNS: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// What a worker is given for a turn (one round or a stretch of them), and gives back.
#[derive(Default)]
struct Job {
    /// The turn's blocks, and the worker's share of them, which it runs first (see
    /// [`run_share`]).
    board: Option<Arc<Board>>,
    share: std::ops::Range<usize>,
    /// The resident blocks' memory, when slots were added since the last round.
    views: Option<BlockViews>,
    /// Emptied race-detector logs lent by the pipe, for the blocks' calls.
    spares: Vec<Vec<race::Call>>,
    /// When the launch handed the job out, for the time the worker took to start it.
    given: Option<std::time::Instant>,
    /// Over the launch: the worker's time running its blocks, waiting for other shares' blocks
    /// to move, and starting turns after the launch handed them out.
    busy: std::time::Duration,
    held_up: std::time::Duration,
    starting: std::time::Duration,
    /// The turn's counters, taken out of its blocks' outcomes by the worker.
    counts: Counts,
}

/// What blocks did that adds up in any order: taken out of their outcomes where they ran, so
/// that the launch can plan the next turn before it joins the rest.
#[derive(Default, Clone, Copy)]
struct Counts {
    thread_instrs: u64,
    clock: u64,
    progress: u64,
    aborted: bool,
    touched_global_sync: bool,
    /// Of the share's own blocks once the turn settled (see [`end_turns`]): the
    /// thread-instructions and progress of the rounds they ran past the turn's end, which the
    /// launch leaves out until its rounds reach them, and how many rounds those are; and
    /// whether a warp of theirs ran in the turn's last round.
    ahead_instrs: u64,
    ahead_progress: u64,
    rounds_ahead: u64,
    ran_last: bool,
}

impl Counts {
    /// Takes the counters a worker's blocks left in its context.
    fn take(&mut self, ctx: &mut Ctx) {
        self.thread_instrs += std::mem::take(&mut ctx.thread_instrs);
        self.clock += std::mem::take(&mut ctx.clock);
        self.progress += std::mem::take(&mut ctx.progress);
        self.aborted |= std::mem::take(&mut ctx.aborted);
        self.touched_global_sync |= std::mem::take(&mut ctx.touched_global_sync);
    }

    /// Adds what another share found of its own blocks as the turn ended (see [`end_turns`]).
    fn add_ended(&mut self, other: &Counts) {
        self.ahead_instrs += other.ahead_instrs;
        self.ahead_progress += other.ahead_progress;
        self.rounds_ahead += other.rounds_ahead;
        self.ran_last |= other.ran_last;
    }
}

/// A resident block as a worker gets it for a turn.
#[derive(Clone, Copy)]
struct Resident {
    slot: u32,
    warps: RawSlice<Warp>,
    state: RawSlice<BlockState>,
    /// The block to prepare the slot for before its first round, when it was just claimed.
    fresh: Option<u64>,
}

/// A value on cache lines of its own: what many threads spin on must not share a line with
/// what they write, or every write sends the line to every spinner.
#[repr(align(128))]
#[derive(Default)]
struct OwnLine<T>(T);

impl<T> std::ops::Deref for OwnLine<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.0
    }
}

/// The launch's workers: each runs some of a round's blocks, the same slots round after round
/// while it can (their warps stay in its core's cache), with a `Ctx` of its own.
pub(crate) struct Crew {
    /// Bumped to start a round; `u64::MAX` sends the workers home.
    round: OwnLine<AtomicU64>,
    done: OwnLine<AtomicUsize>,
    jobs: Vec<OwnLine<Mutex<Job>>>,
    /// The kernel's first instruction, where the blocks the workers prepare start.
    entry: u32,
    /// A worker panicked: the launch must not wait for it.
    failed: AtomicBool,
    /// The launch's thread, and the workers' once they have started: who to wake.
    launch: std::thread::Thread,
    workers: Mutex<Vec<std::thread::Thread>>,
    /// Times a share found nothing to run and waited for the others' blocks.
    waits: AtomicU64,
    /// How long the launch's thread spins for a turn's end when it runs no share.
    launch_spin: std::time::Duration,
    /// Segments of blocks a share ran for another share (see [`Board`]), and segments that
    /// stopped at [`SEGMENT_ROUNDS`] with rounds left to run.
    taken_over: AtomicU64,
    cut_short: AtomicU64,
    /// Rounds on which every block of a turn stopped and the shares let them run together.
    met: AtomicU64,
}

/// Tells the launch when its worker panics.
struct PanicAlarm<'c>(&'c Crew);

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
fn wait_until(ready: impl Fn() -> bool) {
    wait_spinning(crate::spin::SPIN, ready);
}

/// [`wait_until`], spinning for up to `spin`.
fn wait_spinning(spin: std::time::Duration, ready: impl Fn() -> bool) {
    if crate::spin::spin_for_up_to(spin, || ready().then_some(())).is_some() {
        return;
    }
    while !ready() {
        std::thread::park();
    }
}

impl<'a> Ctx<'a> {
    /// The time this thread has spent on the race detector so far (see `timing.rs`).
    pub(crate) fn detector_time(&self) -> std::time::Duration {
        match &self.race {
            Some(Racecheck::Piped(pipe)) => pipe.detector_time,
            _ => std::time::Duration::ZERO,
        }
    }

    /// A worker's context: the launch's module, options and memory, and findings, counters and
    /// race-detector calls of its own.
    pub(crate) fn fork(&self) -> Ctx<'a> {
        Ctx {
            m: self.m,
            allocs: self.allocs.share(),
            opts: self.opts,
            grid: self.grid,
            block: self.block,
            tpb: self.tpb,
            wpb: self.wpb,
            kparams: self.kparams.clone(),
            mem: self.mem.clone(),
            shared_init: self.shared_init.clone(),
            shared_words: self.shared_words,
            shared_size: self.shared_size,
            dyn_base: self.dyn_base,
            reserved_base: self.reserved_base,
            dyn_size: self.dyn_size,
            local_size: self.local_size,
            race: match &self.race {
                Some(Racecheck::Piped(pipe)) => {
                    Some(Racecheck::Logged(race::Log::new(pipe.shard_count())))
                }
                _ => None,
            },
            findings: Collector::default(),
            race_findings: Collector::default(),
            last_alloc: usize::MAX,
            device: self.device,
            peer: self.peer.clone(),
            op_check: None,
            clock: 0,
            thread_instrs: 0,
            progress: 0,
            aborted: false,
            refusal: None,
            printf: Vec::new(),
            printf_bytes: 0,
            printf_dropped: 0,
            conditions: Vec::new(),
            touched_global_sync: false,
            trace: None,
            banks: None,
            lane_stores: Vec::with_capacity(32),
            cdp: super::child_work::DeviceRuntime::default(),
            compiled: self.compiled,
            region_rounds: 0,
        }
    }

    /// Gives a worker's race-detector log emptied logs to start its blocks' logs with.
    fn lend_logs(&mut self, spares: &mut Vec<Vec<race::Call>>) {
        if let Some(Racecheck::Logged(log)) = self.race.as_mut() {
            log.streams.pool.append(spares);
        }
    }

    /// Hands back the emptied logs a round did not use.
    fn unused_logs(&mut self, into: &mut Vec<Vec<race::Call>>) {
        self.unused_logs_beyond(0, into);
    }

    /// Hands back the emptied logs a round did not use beyond the first `keep`.
    fn unused_logs_beyond(&mut self, keep: usize, into: &mut Vec<Vec<race::Call>>) {
        if let Some(Racecheck::Logged(log)) = self.race.as_mut()
            && log.streams.pool.len() > keep
        {
            into.extend(log.streams.pool.drain(keep..));
        }
    }

    /// Whether the blocks run since the last outcome made something whose order among blocks
    /// matters: findings, race-detector calls, a refusal. (A stop is a counter: the launch
    /// stops after the turn whichever block stopped it.)
    fn made_ordered(&self) -> bool {
        let logged = match &self.race {
            Some(Racecheck::Logged(log)) => log.streams.calls > 0,
            _ => false,
        };
        logged || !self.findings.list.is_empty() || self.refusal.is_some()
    }

    /// Takes what the worker's blocks made since the last outcome whose order among blocks
    /// matters, leaving the counters, which its share sums at its end.
    fn outcome(&mut self) -> Outcome {
        let log = match self.race.as_mut() {
            Some(Racecheck::Logged(log)) => Some(log.take()),
            _ => None,
        };
        // Positions count from the log's start, which the next outcome's log starts again.
        let findings = if self.findings.list.is_empty() {
            self.findings.position = 0;
            None
        } else {
            Some(Box::new(std::mem::take(&mut self.findings)))
        };
        Outcome {
            findings,
            log,
            refusal: self.refusal.take().map(Box::new),
        }
    }

    /// Sets aside the launch's findings, refusal and piped race detector, so that a round run
    /// here leaves what order shows as a worker's round does, to wait in line behind what the
    /// workers' turns left (see [`Ctx::in_line`]).
    pub(crate) fn set_aside(&mut self) -> Aside {
        let piped = match &mut self.race {
            Some(Racecheck::Piped(pipe)) => {
                let shards = pipe.shard_count();
                let mut log = race::Log::new(shards);
                log.streams.pool = pipe.lend(shards);
                self.race.replace(Racecheck::Logged(log))
            }
            _ => None,
        };
        Aside {
            piped,
            findings: std::mem::take(&mut self.findings),
            refusal: self.refusal.take(),
        }
    }

    /// What the rounds run since [`Ctx::set_aside`] left for the line, if anything; the launch's
    /// own are back. Their counters stay in the launch's, which adds up in any order.
    pub(crate) fn in_line(&mut self, aside: Aside) -> Option<Outcome> {
        let mut log = None;
        if let Some(piped) = aside.piped
            && let Some(Racecheck::Logged(mut logged)) = self.race.replace(piped)
        {
            if logged.streams.calls > 0 {
                log = Some(logged.take());
            }
            if let Some(Racecheck::Piped(pipe)) = self.race.as_mut() {
                pipe.take_back(&mut logged.streams.pool);
            }
        }
        let findings = std::mem::replace(&mut self.findings, aside.findings);
        let refusal = std::mem::replace(&mut self.refusal, aside.refusal);
        let findings = (!findings.list.is_empty()).then(|| Box::new(findings));
        let made = log.is_some() || findings.is_some() || refusal.is_some();
        made.then_some(Outcome {
            findings,
            log,
            refusal: refusal.map(Box::new),
        })
    }

    /// Adds blocks' counters to the launch's (the step budget, the watchdog and a stop read
    /// them before the next turn).
    fn add_counts(&mut self, counts: Counts) {
        self.thread_instrs += counts.thread_instrs;
        self.clock += counts.clock;
        self.progress += counts.progress;
        self.aborted |= counts.aborted;
        self.touched_global_sync |= counts.touched_global_sync;
    }

    /// Adds a block's round to the launch's, as if it had run here after everything before: a
    /// refusal, findings and race-detector calls.
    fn join(&mut self, outcome: Outcome) {
        if self.refusal.is_none() {
            self.refusal = outcome.refusal.map(|refusal| *refusal);
        }
        // The turn counted positions from its own start; before it, this many accesses went
        // to the detector.
        let sent_before = match self.race.as_mut() {
            Some(Racecheck::Piped(pipe)) => pipe.accesses,
            _ => 0,
        };
        if let (Some(Racecheck::Piped(pipe)), Some(log)) = (self.race.as_mut(), outcome.log) {
            pipe.append(log);
        }
        if let Some(findings) = outcome.findings {
            self.findings.absorb(*findings, 2 * sent_before);
        }
        if let Some(Racecheck::Piped(pipe)) = self.race.as_mut() {
            self.findings.position = 2 * pipe.accesses;
            if !pipe.found.is_empty() {
                self.report_found();
            }
        }
    }
}

/// The launch's own findings, refusal and piped race detector while a round on its core waits
/// in line (see [`Ctx::set_aside`]).
pub(crate) struct Aside {
    piped: Option<Racecheck>,
    findings: Collector,
    refusal: Option<crate::error::EmuError>,
}

/// A block and its turn as it runs, segment by segment. A block that ran ahead of the launch's
/// rounds starts its turn with those rounds; its `ahead` is `None` until a share stops it for
/// the turn (the launch looks itself at a block whose `ahead` is unknown).
struct Running {
    block: Resident,
    turn: Turn,
    /// The rounds the block ran past the turn's end, once the turn settled.
    lead: Lead,
}

/// A turn's blocks in slot order, each share a run of them. Each block goes as far as it may on
/// its own (see [`run_share`]); any share may run a block's next segment, so that a share on a
/// slower core (cloud machines lend cores that run at different speeds) leaves its last blocks
/// to the others instead of making the whole turn wait.
struct Board {
    blocks: Vec<OwnLine<OnBoard>>,
    /// Rounds every block may run whatever they do (the launch looked at them), and the most
    /// any block runs.
    planned: u32,
    most: u32,
    /// Bumped whenever a share puts back a block that changed: shares with nothing to run wait
    /// for it, or for the nearest horizon to move.
    changes: OwnLine<AtomicU64>,
    /// Blocks being run now.
    running: OwnLine<AtomicUsize>,
    /// Whether the blocks may meet on a round once they all stopped: [`OPEN`], [`DECIDING`]
    /// while a share decides it, [`OVER`] once one found they may not (see [`Board::settle`]).
    meeting: OwnLine<AtomicU8>,
}

/// States of [`Board::meeting`].
const OPEN: u8 = 0;
const DECIDING: u8 = 1;
const OVER: u8 = 2;

/// What a share that found its turn settled learns of it.
enum Settled {
    /// The turn is over.
    Over,
    /// This share let the blocks meet on their round: look at them again.
    Met,
    /// Something moved meanwhile, or another share let the blocks meet: look again.
    Moved,
    /// A worker panicked.
    Failed,
}

/// The most rounds a share runs of a block before it puts the block back. A block runs its
/// whole tree of barriers in one go otherwise (about 110 rounds of `reduce_better`), so a share
/// on a slower core kept its blocks to the end of the wave while the others waited; put back
/// every 16 rounds (about 50 µs), a block the owner is not running is there for a share that
/// has run out of its own (see BENCHMARK.md, "The clock of a lone core").
const SEGMENT_ROUNDS: u32 = 16;

/// The most emptied race-detector logs a worker keeps from one turn to the next. A share's
/// blocks use about one a block and round that makes calls; kept without a bound, the logs lent
/// and not used piled up on some workers (on four workers of the 4 M launch, 6,301 on one and
/// none on another), and freeing them made the launch's end wait 2–7 ms.
const KEPT_LOGS: usize = 128;

/// The rounds of a block still to be counted (see [`run_block`]).
const NOT_COUNTED: u32 = u32::MAX;

/// A block of the board: whether a share runs it now, how far it got, and its turn so far.
struct OnBoard {
    taken: AtomicBool,
    /// The round it reached, from the turn's start.
    reached: AtomicU32,
    /// The round before which it surely changes nothing beyond itself: once every block's
    /// horizon is past a round, no one writes global memory before it, and every block may
    /// load global memory until then.
    horizon: AtomicU32,
    /// Rounds from `reached` it surely keeps to itself, global loads excluded, which it may run
    /// past the others' horizons ([`NOT_COUNTED`] before it was looked at).
    keeps_to_itself: AtomicU32,
    /// On lines of its own: the share running the block writes it every round, while the
    /// others read the atomics above.
    running: OwnLine<std::cell::UnsafeCell<Running>>,
}

impl OnBoard {
    /// The block reached round `reached`, and stays quiet `quiet` rounds from there.
    fn publish(&self, board: &Board, reached: u32, quiet: u32) {
        self.reached.store(reached, Ordering::Release);
        self.horizon
            .fetch_max(board.planned.max(reached + quiet), Ordering::AcqRel);
    }
}

// SAFETY: a block's `running` is touched only by the share that took it (`taken`), and takes
// follow each other through `taken`'s release and acquire (see `run_share`).
unsafe impl Sync for OnBoard {}

impl Board {
    fn new(blocks: impl Iterator<Item = Running>, planned: u32, most: u32) -> Board {
        let blocks = blocks
            .map(|running| {
                OwnLine(OnBoard {
                    taken: AtomicBool::new(false),
                    reached: AtomicU32::new(running.turn.counts.len() as u32),
                    horizon: AtomicU32::new(planned),
                    keeps_to_itself: AtomicU32::new(NOT_COUNTED),
                    running: OwnLine(std::cell::UnsafeCell::new(running)),
                })
            })
            .collect();
        Board {
            blocks,
            planned,
            most,
            changes: OwnLine(AtomicU64::new(0)),
            running: OwnLine(AtomicUsize::new(0)),
            meeting: OwnLine(AtomicU8::new(OPEN)),
        }
    }

    /// A share found no block it could run, none running, and nothing changed since `seen`.
    /// Unless another share decides it already, decides whether the blocks, all stopped at one
    /// round, may run it together: as the launch would plan the next turn's first round, from
    /// the footprints the shares made where they stopped the blocks. The blocks reach the store
    /// that ends a wave of `reduce_better` together, and meeting there saves the wave a turn.
    /// When they may, their horizons now let each run the round.
    ///
    /// # Safety
    /// The board's blocks' warps and states are touched by no one but the turn's shares.
    unsafe fn settle(&self, seen: u64, failed: &AtomicBool) -> Settled {
        let deciding = || {
            let meeting = &self.meeting;
            meeting.compare_exchange(OPEN, DECIDING, Ordering::AcqRel, Ordering::Acquire)
        };
        loop {
            match deciding() {
                Ok(_) => {
                    let still = self.running.load(Ordering::SeqCst) == 0
                        && self.changes.load(Ordering::SeqCst) == seen;
                    if !still {
                        self.meeting.store(OPEN, Ordering::Release);
                        return Settled::Moved;
                    }
                    // SAFETY: no block runs, and none is taken while the meeting is decided:
                    // none is runnable, and its horizon moves only below.
                    if let Some(round) = unsafe { self.meeting_round() } {
                        for on in &self.blocks {
                            on.horizon.fetch_max(round + 1, Ordering::AcqRel);
                        }
                        self.changes.fetch_add(1, Ordering::SeqCst);
                        self.meeting.store(OPEN, Ordering::Release);
                        return Settled::Met;
                    }
                    self.meeting.store(OVER, Ordering::Release);
                    return Settled::Over;
                }
                Err(OVER) => return Settled::Over,
                Err(_) => {
                    while self.meeting.load(Ordering::Acquire) == DECIDING {
                        if failed.load(Ordering::Acquire) {
                            return Settled::Failed;
                        }
                        std::hint::spin_loop();
                    }
                }
            }
        }
    }

    /// The round every block stopped at, when they may all run it together: each is alive,
    /// stopped there with its footprint made, and the footprints keep apart; and the turn may
    /// run one more round.
    ///
    /// # Safety
    /// No share runs or takes a block meanwhile.
    unsafe fn meeting_round(&self) -> Option<u32> {
        let round = self.blocks.first()?.reached.load(Ordering::Acquire);
        if round >= self.most {
            return None;
        }
        let mut aheads = Vec::with_capacity(self.blocks.len());
        for on in &self.blocks {
            if on.reached.load(Ordering::Acquire) != round {
                return None;
            }
            // SAFETY: the caller's promise; the share that last ran the block put it back.
            let running = unsafe { &*on.running.get() };
            let state = running.block.state.get(0..1);
            if state.is_none_or(|state| state[0].live == 0) {
                return None;
            }
            aheads.push(running.turn.ahead.as_ref());
        }
        plan::next_round_apart(aheads.into_iter()).then_some(round)
    }

    /// The round before which every block may load global memory: the nearest horizon, or
    /// the turn's most.
    fn bound(&self) -> u32 {
        let nearest = self
            .blocks
            .iter()
            .map(|b| b.horizon.load(Ordering::Acquire));
        nearest.min().unwrap_or(0).min(self.most)
    }

    /// Whether block `index` has rounds to run, as far as its share can tell with `bound`.
    fn runnable(&self, index: usize, bound: u32) -> bool {
        self.runnable_alone(&self.blocks[index], bound)
    }

    /// [`Board::runnable`], for a block the caller holds.
    fn runnable_alone(&self, block: &OnBoard, bound: u32) -> bool {
        let reached = block.reached.load(Ordering::Acquire);
        reached < self.most
            && (reached < bound || block.keeps_to_itself.load(Ordering::Acquire) > 0)
    }

    /// Takes block `index` for the caller: true when no share had it.
    fn take(&self, index: usize) -> bool {
        self.running.fetch_add(1, Ordering::SeqCst);
        let taken = &self.blocks[index].taken;
        let took = !taken.load(Ordering::Acquire)
            && taken
                .compare_exchange(false, true, Ordering::AcqRel, Ordering::Acquire)
                .is_ok();
        if !took {
            self.running.fetch_sub(1, Ordering::SeqCst);
        }
        took
    }

    /// Puts block `index` back, with what changed published.
    fn put_back(&self, index: usize, changed: bool) {
        if changed {
            self.changes.fetch_add(1, Ordering::SeqCst);
        }
        self.blocks[index].taken.store(false, Ordering::Release);
        self.running.fetch_sub(1, Ordering::SeqCst);
    }

    /// The order a share looks at the blocks in: its own share first, then, to take over
    /// others' blocks, backwards from the block before its share (the others work forwards
    /// through theirs, so they meet late).
    fn order(&self, share: &std::ops::Range<usize>) -> impl Iterator<Item = usize> + use<> {
        let count = self.blocks.len();
        let start = share.start;
        let own = share.clone();
        let others = (1..=count)
            .map(move |back| (start + count - back) % count)
            .filter(move |index| !own.contains(index));
        share.clone().chain(others)
    }
}

/// Runs the warps of the block for `rounds` rounds, one instruction each a round, from the
/// turn's round `from`; what order shows is kept round by round. Returns whether a warp ran in
/// the last round.
///
/// # Safety
/// The block's warps, state and memory are touched by no one else meanwhile.
unsafe fn run_segment(ctx: &mut Ctx, running: &mut Running, from: u32, rounds: u32) -> bool {
    let Resident { warps, state, .. } = &mut running.block;
    let (Some(warps), Some(state)) = (warps.get_mut(0..warps.len()), state.get_mut(0..1)) else {
        return false;
    };
    let state = &mut state[0];
    let mut ran = false;
    for round in from..from + rounds {
        ran = false;
        let before = (ctx.thread_instrs, ctx.progress);
        // A compiled region ends within the segment: then everyone sees its registers.
        ctx.region_rounds = from + rounds - round;
        for wi in 0..warps.len() {
            if let Step::Ran = block::step(ctx, warps, state, wi) {
                ran = true;
            }
        }
        running.turn.counts.push(RoundCount {
            instrs: ctx.thread_instrs - before.0,
            progress: ctx.progress - before.1,
            ran,
        });
        if ctx.made_ordered() {
            running.turn.rounds.push(round);
            running.turn.outcomes.push(ctx.outcome());
        }
    }
    ran
}

/// Runs a block the caller took as far as it may go for now, [`SEGMENT_ROUNDS`] at most: while
/// its rounds come before every block's horizon (`bound`, which the caller keeps and this
/// renews), and past it while they keep to the block (no global memory at all, no end: no one
/// else can tell when they ran). After each segment the block's new horizon is published, so
/// that the others may go on. Returns whether it ran, whether anything of it changed, and
/// whether it stopped at [`SEGMENT_ROUNDS`] with rounds it might have run.
///
/// # Safety
/// The block's warps, state and memory are touched by no one else meanwhile.
unsafe fn run_block(
    ctx: &mut Ctx,
    entry: u32,
    board: &Board,
    on: &OnBoard,
    running: &mut Running,
    bound: &mut u32,
) -> (bool, bool, bool) {
    let Resident {
        slot,
        warps,
        state,
        fresh,
    } = running.block;
    let (Some(warps), Some(state)) = (warps.get_mut(0..warps.len()), state.get_mut(0..1)) else {
        return (false, false, false);
    };
    let state = &mut state[0];
    if let Some(block) = fresh {
        super::block::prepare_block(ctx, entry, slot, block, warps);
        running.block.fresh = None;
    }
    let mut keeps = on.keeps_to_itself.load(Ordering::Relaxed);
    let uncounted = keeps == NOT_COUNTED;
    let mut counted = None;
    if uncounted {
        let (stretch, quiet) = plan::stretches(ctx, warps, state);
        keeps = stretch;
        counted = Some((stretch, quiet));
        on.publish(board, running.turn.counts.len() as u32, quiet);
    }
    let mut ran = false;
    let mut rounds_here = 0;
    while rounds_here < SEGMENT_ROUNDS {
        let reached = running.turn.counts.len() as u32;
        if reached >= board.most {
            break;
        }
        if reached >= *bound {
            *bound = board.bound();
        }
        let rounds = bound
            .saturating_sub(reached)
            .max(keeps)
            .min(board.most - reached)
            .min(SEGMENT_ROUNDS - rounds_here);
        if rounds == 0 {
            break;
        }
        rounds_here += rounds;
        // SAFETY: the caller's promise.
        let ran_last = unsafe { run_segment(ctx, running, reached, rounds) };
        ran = true;
        let (stretch, quiet) = plan::stretches(ctx, warps, state);
        // A block none of whose warps ran stays as it is until another block changes
        // something: it goes no further alone.
        keeps = if ran_last { stretch } else { 0 };
        counted = Some((stretch, quiet));
        on.publish(board, reached + rounds, quiet);
    }
    on.keeps_to_itself.store(keeps, Ordering::Release);
    let cut = rounds_here == SEGMENT_ROUNDS && board.runnable_alone(on, *bound);
    // A block cut short is taken again: what its next rounds may do is made where it stops.
    running.turn.ahead = (!cut).then(|| {
        let (stretch, quiet) = counted.unwrap_or_else(|| plan::stretches(ctx, warps, state));
        plan::ahead_from(ctx, warps, state, slot, stretch, quiet)
    });
    (ran, ran || uncounted, cut)
}

/// Runs a share of a turn's blocks, and, whenever none of them can go on, a segment of any block
/// of the `board` that no share runs at the moment: each block as far as it may go (see
/// [`run_block`]), until no block can go further.
/// Every block first runs the rounds the launch planned; past them, a block loads global memory
/// only before every block's horizon, and goes past that horizon only through rounds that
/// keep to itself, so a tree of barriers over shared memory runs to its end without waiting
/// for the other blocks. The turn ends where the nearest horizon is: blocks that went past it
/// are ahead of the launch's rounds (see `plan::Lead`). Every counter the share's rounds left
/// is added to `counts`; the time spent waiting for other shares' blocks adds to `held_up`.
///
/// # Safety
/// The board's blocks' warps, states and memory are touched by no one but the turn's shares.
unsafe fn run_share(
    ctx: &mut Ctx,
    crew: &Crew,
    board: &Board,
    share: &std::ops::Range<usize>,
    counts: &mut Counts,
    held_up: &mut std::time::Duration,
) {
    let mut taken_over = 0;
    let mut cut_short = 0;
    let mut waits = 0;
    let mut met = 0;
    let settled = loop {
        let seen = board.changes.load(Ordering::SeqCst);
        let mut bound = board.bound();
        let mut ran_any = false;
        for index in board.order(share) {
            let own = share.contains(&index);
            // Others' blocks only once the share's own have nothing to run, and one segment
            // at a time: the owner may be back for it.
            if ran_any && !own {
                break;
            }
            if !board.runnable(index, bound) || !board.take(index) {
                continue;
            }
            let on = &board.blocks[index];
            // SAFETY: this share alone took the block; the last share to run it put it back
            // before, and the caller's promise covers the rest.
            let running = unsafe { &mut *on.running.get() };
            let (ran, changed, cut) =
                unsafe { run_block(ctx, crew.entry, board, on, running, &mut bound) };
            cut_short += u64::from(cut);
            board.put_back(index, changed);
            ran_any |= ran;
            taken_over += u64::from(ran && !own);
            if ran && !own {
                break;
            }
        }
        if ran_any {
            continue;
        }
        let settled = || {
            board.running.load(Ordering::SeqCst) == 0
                && board.changes.load(Ordering::SeqCst) == seen
        };
        if settled() {
            // SAFETY: the caller's promise.
            match unsafe { board.settle(seen, &crew.failed) } {
                Settled::Over => break true,
                Settled::Failed => break false,
                Settled::Met => {
                    met += 1;
                    continue;
                }
                Settled::Moved => continue,
            }
        }
        if crew.failed.load(Ordering::Acquire) {
            break false;
        }
        // Others run blocks whose horizons hold this share's back: wait for one to move.
        waits += 1;
        let waited = std::time::Instant::now();
        let moved = || {
            board.changes.load(Ordering::SeqCst) != seen
                || board.bound() > bound
                || board.running.load(Ordering::SeqCst) == 0
                || crew.failed.load(Ordering::Acquire)
        };
        if crate::spin::spin_for(|| moved().then_some(())).is_none() {
            while !moved() {
                std::thread::park_timeout(std::time::Duration::from_micros(50));
            }
        }
        *held_up += waited.elapsed();
    };
    if settled {
        // SAFETY: the turn settled, so no share takes a block of it again.
        unsafe { end_turns(board, share, counts) };
    }
    counts.take(ctx);
    if taken_over > 0 {
        crew.taken_over.fetch_add(taken_over, Ordering::Relaxed);
    }
    if cut_short > 0 {
        crew.cut_short.fetch_add(cut_short, Ordering::Relaxed);
    }
    if met > 0 {
        crew.met.fetch_add(met, Ordering::Relaxed);
    }
    if waits > 0 {
        crew.waits.fetch_add(waits, Ordering::Relaxed);
    }
}

/// Ends the turns of a share's own blocks where the block that went least far stopped (every
/// share finds the same round, since no block moves again): each keeps the rounds it ran past
/// it as its lead, and `counts` what the launch needs of them. Made here, where the blocks'
/// turns are in cache, rather than by the launch's thread while every worker waits for it.
///
/// # Safety
/// The turn settled: no share runs or takes a block of the board again.
unsafe fn end_turns(board: &Board, share: &std::ops::Range<usize>, counts: &mut Counts) {
    let reached = board
        .blocks
        .iter()
        .map(|b| b.reached.load(Ordering::Acquire));
    let ran = reached.min().unwrap_or(0);
    for index in share.clone() {
        // SAFETY: the caller's promise; the share that last ran the block put it back before.
        let running = unsafe { &mut *board.blocks[index].running.get() };
        running.lead = running.turn.split_ahead(ran);
        let (instrs, progress) = running.lead.counted();
        counts.ahead_instrs += instrs;
        counts.ahead_progress += progress;
        counts.rounds_ahead += running.lead.len() as u64;
        let last = ran
            .checked_sub(1)
            .and_then(|r| running.turn.counts.get(r as usize));
        counts.ran_last |= last.is_some_and(|c| c.ran);
    }
}

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
    fn signal(&self, round: u64) {
        self.round.store(round, Ordering::Release);
        let workers = self.workers.lock().unwrap_or_else(|e| e.into_inner());
        for worker in workers.iter() {
            worker.unpark();
        }
    }

    /// A worker: runs the blocks of its job each round until sent home.
    pub(crate) fn work(&self, index: usize, mut ctx: Ctx) {
        let _alarm = PanicAlarm(self);
        self.workers
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(std::thread::current());
        let mut seen = 0u64;
        loop {
            wait_until(|| self.round.load(Ordering::Acquire) != seen);
            seen = self.round.load(Ordering::Acquire);
            if seen == u64::MAX {
                return;
            }
            {
                let started = std::time::Instant::now();
                let mut job = self.jobs[index].lock().unwrap_or_else(|e| e.into_inner());
                if let Some(given) = job.given.take() {
                    job.starting += started.saturating_duration_since(given);
                }
                if let Some(views) = job.views.take() {
                    ctx.mem = views;
                }
                ctx.lend_logs(&mut job.spares);
                let job = &mut *job;
                let mut held_up = std::time::Duration::ZERO;
                if let Some(board) = job.board.take() {
                    // SAFETY: the launch hands the board's blocks to this turn's shares only,
                    // and waits for them all before it touches a block again.
                    unsafe {
                        run_share(
                            &mut ctx,
                            self,
                            &board,
                            &job.share,
                            &mut job.counts,
                            &mut held_up,
                        )
                    };
                }
                // The emptied logs its blocks did not use stay with the worker for its next
                // turn, up to [`KEPT_LOGS`]: handed back, the launch's thread read every one of
                // them, from this core's cache, while the workers waited for the next turn.
                ctx.unused_logs_beyond(KEPT_LOGS, &mut job.spares);
                job.busy += started.elapsed().saturating_sub(held_up);
                job.held_up += held_up;
            }
            if self.done.fetch_add(1, Ordering::AcqRel) + 1 == self.jobs.len() {
                self.launch.unpark();
            }
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

    /// Segments that stopped at [`SEGMENT_ROUNDS`] with rounds left, so far.
    pub(crate) fn cut_short(&self) -> u64 {
        self.cut_short.load(Ordering::Acquire)
    }

    /// Rounds the shares met on so far (see [`Board::settle`]).
    pub(crate) fn met(&self) -> u64 {
        self.met.load(Ordering::Acquire)
    }
}

impl Launch<'_> {
    /// Runs rounds of `resident` (at most `most`) on the launch's core and its crew's, when they
    /// allow: returns how many ran, as one core would have run them, and whether a warp ran in
    /// the last; `None` when the next round must run on one core. `own` is the context the
    /// launch's core runs its share of the blocks with.
    ///
    /// The turn's counters join the launch's at once (the next turn's plan, the step budget and
    /// the watchdog read them); its findings and race-detector calls wait in `rounds` and join
    /// while the next turn runs, or before the launch next does something of its own that comes
    /// in order ([`Launch::join_waiting`]): so the launch's core is not the last of every turn.
    pub(crate) fn parallel_rounds(
        &mut self,
        crew: &Crew,
        rounds: &mut Rounds,
        own: &mut Ctx,
        resident: &[u32],
        most: u32,
    ) -> Option<(u32, bool)> {
        let planning = Lap::start(self.ctx.detector_time());
        let (instrs_before, progress_before) = (self.ctx.thread_instrs, self.ctx.progress);
        let workers = crew.jobs.len();
        let parts = (workers + 1).min(resident.len());
        let planned = if parts < 2 {
            None
        } else {
            rounds.plan(self, resident, most)
        };
        let Some(planned) = planned else {
            rounds.serial_rounds += 1;
            rounds.forget();
            self.clocks.joins += planning.stop(self.ctx.detector_time());
            return None;
        };
        let most = most.max(planned);
        let wpb = self.ctx.wpb as usize;
        // By slot, so that a block stays on one core from round to round.
        rounds.by_slot.clear();
        rounds.by_slot.extend_from_slice(resident);
        rounds.by_slot.sort_unstable();
        let (mine, theirs) = rounds
            .by_slot
            .split_at(launch_share(resident.len(), workers));
        let new_views = rounds.views_for != self.blocks.len();
        rounds.views_for = self.blocks.len();
        if new_views {
            own.mem = self.ctx.mem.clone();
        }
        let warps = RawSlice::of(&mut self.warps);
        let states = RawSlice::of(&mut self.blocks);
        let (unprepared, prepared) = (&mut rounds.unprepared, &mut rounds.prepared_in_turns);
        let leads = &mut rounds.leads;
        // What the blocks ran ahead counts again from now: its rounds are the turn's first.
        let mut ahead_counted = (0, 0);
        let mut of_slot = |slot: u32| {
            let at = slot as usize;
            let fresh = unprepared.get_mut(at).and_then(Option::take);
            *prepared += fresh.is_some() as u64;
            let lead = leads.get_mut(at).map(std::mem::take).unwrap_or_default();
            let (instrs, progress) = lead.counted();
            ahead_counted = (ahead_counted.0 + instrs, ahead_counted.1 + progress);
            Running {
                block: Resident {
                    slot,
                    warps: warps.sub(at * wpb..(at + 1) * wpb),
                    state: states.sub(at..at + 1),
                    fresh,
                },
                turn: lead.into_turn(),
                lead: Lead::default(),
            }
        };
        // Each block's share of the spare streams, so that the first job does not take them
        // all and leave the others to allocate theirs.
        let spares_per_block = match self.ctx.race.as_ref() {
            Some(Racecheck::Piped(pipe)) => pipe.spares() / resident.len(),
            _ => 0,
        };
        let mut lend = |count: usize| match self.ctx.race.as_mut() {
            Some(Racecheck::Piped(pipe)) => {
                // Blocks may run on to `most` rounds.
                let streams = count * most as usize * pipe.shard_count();
                pipe.lend(streams.min(count * spares_per_block))
            }
            _ => Vec::new(),
        };
        own.lend_logs(&mut lend(mine.len()));
        let board = Arc::new(Board::new(
            rounds.by_slot.iter().map(|&slot| of_slot(slot)),
            planned,
            most,
        ));
        self.ctx.thread_instrs += ahead_counted.0;
        self.ctx.progress += ahead_counted.1;
        let mut taken = mine.len();
        for (index, job) in crew.jobs.iter().enumerate() {
            let mut job = job.lock().unwrap_or_else(|e| e.into_inner());
            // Shares as even as they go, the larger ones first.
            let count = theirs.len() / workers + usize::from(index < theirs.len() % workers);
            job.share = taken..taken + count;
            taken += count;
            job.board = Some(Arc::clone(&board));
            if new_views {
                job.views = Some(self.ctx.mem.clone());
            }
            job.spares.append(&mut lend(count));
            job.given = Some(std::time::Instant::now());
        }
        crew.done.store(0, Ordering::Release);
        if let Some(ended) = self.clocks.turn_ended.take() {
            self.clocks.between_turns += ended.elapsed();
        }
        crew.signal(crew.round.load(Ordering::Acquire) + 1);
        self.clocks.joins += planning.stop(self.ctx.detector_time());
        let running = std::time::Instant::now();
        let mut held_up = std::time::Duration::ZERO;
        let mut counts = Counts::default();
        if !mine.is_empty() {
            // SAFETY: the board's blocks are the turn's shares' only, until they all finished.
            unsafe {
                run_share(
                    own,
                    crew,
                    &board,
                    &(0..mine.len()),
                    &mut counts,
                    &mut held_up,
                )
            };
        }
        self.ctx.add_counts(counts);
        let mut ended = counts;
        self.clocks.interpreter += running.elapsed().saturating_sub(held_up);
        self.clocks.waiting += held_up;
        // What earlier turns did joins while the workers run this one, as far as it gets.
        let finished =
            || crew.done.load(Ordering::Acquire) == workers || crew.failed.load(Ordering::Acquire);
        self.join_until(&mut rounds.waiting, finished);
        let waiting = std::time::Instant::now();
        let spin = if mine.is_empty() {
            crew.launch_spin
        } else {
            crate::spin::SPIN
        };
        wait_spinning(spin, finished);
        self.clocks.turn_ended = Some(std::time::Instant::now());
        self.clocks.waiting += waiting.elapsed();
        self.clocks.turns += 1;
        assert!(
            !crew.failed.load(Ordering::Acquire),
            "a worker of the launch panicked"
        );
        let joining = Lap::start(self.ctx.detector_time());
        for job in &crew.jobs {
            let mut job = job.lock().unwrap_or_else(|e| e.into_inner());
            let counts = std::mem::take(&mut job.counts);
            self.ctx.add_counts(counts);
            ended.add_ended(&counts);
            if let Some(Racecheck::Piped(pipe)) = self.ctx.race.as_mut() {
                pipe.take_back(&mut job.spares);
            }
        }
        if let Some(Racecheck::Piped(pipe)) = self.ctx.race.as_mut() {
            let mut unused = Vec::new();
            own.unused_logs(&mut unused);
            pipe.take_back(&mut unused);
        }
        // Every worker put the board down before it said it was done.
        let board = Arc::into_inner(board).expect("a worker kept the turn's board");
        if rounds.turns.len() < self.blocks.len() {
            rounds.turns.resize_with(self.blocks.len(), || None);
        }
        if rounds.leads.len() < self.blocks.len() {
            rounds.leads.resize_with(self.blocks.len(), Lead::default);
        }
        // The shares ended each block's turn where the block that went least far stopped; the
        // others are ahead, and their rounds past it count once the launch's rounds reach them,
        // as one core counts (see `end_turns`).
        let mut ran = u32::MAX;
        for on in board.blocks {
            let Running { block, turn, lead } = on.0.running.0.into_inner();
            ran = ran.min(turn.counts.len() as u32);
            rounds.leads[block.slot as usize] = lead;
            rounds.turns[block.slot as usize] = Some(turn);
        }
        let ran = if ran == u32::MAX { 0 } else { ran };
        self.ctx.thread_instrs -= ended.ahead_instrs;
        self.ctx.progress -= ended.ahead_progress;
        rounds.rounds_ahead += ended.rounds_ahead;
        // A round in which no warp ran changes nothing, so neither do the ones after it: whether
        // the last one ran tells whether all did.
        let progressed = ended.ran_last;
        rounds.parallel_rounds += ran as u64;
        if ran > 1 {
            rounds.stretched_rounds += ran as u64;
        }
        rounds.past_plan_rounds += ran.saturating_sub(planned) as u64;
        // The watchdog's looks inside the turn, from its rounds' counts summed over blocks. The
        // launch's count now ends with the turn's last round: a look falls inside only when it
        // reached the next one (about one turn in four), and only then are the blocks' counts,
        // which their workers' caches hold, read again.
        if self.ctx.thread_instrs >= self.watchdog.next_check {
            let mut counts = vec![(0u64, 0u64); ran as usize];
            for &slot in resident {
                if let Some(turn) = rounds.turns[slot as usize].as_ref() {
                    for (sum, count) in counts.iter_mut().zip(&turn.counts) {
                        sum.0 += count.instrs;
                        sum.1 += count.progress;
                    }
                }
            }
            self.watchdog_rounds(&counts, instrs_before, progress_before);
        }
        // In line for the join, to come out round by round in block order, as one core would
        // have made them.
        let mut turns = Vec::with_capacity(resident.len());
        for &slot in resident {
            if let Some(mut turn) = rounds.turns[slot as usize].take() {
                rounds.ahead[slot as usize] = turn.ahead.take();
                turns.push(turn);
            }
        }
        rounds.waiting.push_back(Waiting::Turn(LinedUp::new(turns)));
        self.clocks.joins += joining.stop(self.ctx.detector_time());
        Some((ran, progressed))
    }

    /// Block `slot`'s part in a round on one core, when the block ran that round ahead (see
    /// `plan::Lead`): its counts join the launch's, and its outcome, in block order, the line
    /// (`in_line`, where the round's own outcomes wait too) or the launch's own. Returns
    /// whether a warp of it ran; `None` when the block must run the round.
    pub(crate) fn round_ahead(
        &mut self,
        rounds: &mut Rounds,
        slot: u32,
        in_line: bool,
    ) -> Option<bool> {
        let (count, outcome) = rounds.leads.get_mut(slot as usize)?.take_round()?;
        rounds.ahead_taken_alone += 1;
        self.ctx.thread_instrs += count.instrs;
        self.ctx.progress += count.progress;
        if let Some(outcome) = outcome {
            if in_line {
                // What the blocks before it in this round left comes first.
                if self.ctx.made_ordered() {
                    let before = self.ctx.outcome();
                    rounds.waiting.push_back(Waiting::Outcome(before));
                }
                rounds.waiting.push_back(Waiting::Outcome(outcome));
            } else {
                self.ctx.join(outcome);
            }
        }
        Some(count.ran)
    }

    /// Joins everything waiting into the launch's findings and race-detector calls. The launch
    /// calls this before it makes any of its own: a round on one core, its report.
    pub(crate) fn join_waiting(&mut self, waiting: &mut VecDeque<Waiting>) {
        self.join_until(waiting, || false);
    }

    /// Joins what waits, in line, until `enough` says to stop or nothing is left.
    fn join_until(&mut self, waiting: &mut VecDeque<Waiting>, enough: impl Fn() -> bool) {
        if waiting.is_empty() {
            return;
        }
        let joining = Lap::start(self.ctx.detector_time());
        while !enough() {
            let Some(next) = waiting.pop_front() else {
                break;
            };
            match next {
                Waiting::Turn(mut lined) => {
                    if let Some(outcome) = lined.next() {
                        waiting.push_front(Waiting::Turn(lined));
                        self.ctx.join(outcome);
                    }
                }
                Waiting::Outcome(outcome) => self.ctx.join(outcome),
                Waiting::Started { slot, block } => {
                    if let Some(race) = self.ctx.race.as_mut() {
                        race.block_started(slot, block);
                    }
                }
                Waiting::Finished { slot } => {
                    if let Some(race) = self.ctx.race.as_mut() {
                        race.block_finished(slot);
                    }
                }
            }
        }
        self.clocks.joins += joining.stop(self.ctx.detector_time());
    }
}

/// How many of a turn's `blocks` the launch's core runs when `workers` run the rest: none once
/// there are enough workers (see [`WORKERS_FOR_A_FREE_LAUNCH`]), otherwise an even share, the
/// smaller one when the blocks do not divide evenly.
fn launch_share(blocks: usize, workers: usize) -> usize {
    if workers >= WORKERS_FOR_A_FREE_LAUNCH {
        0
    } else {
        blocks / (workers + 1)
    }
}

/// Sends the crew home when dropped.
pub(crate) struct Dismissal<'c>(pub(crate) &'c Crew);

impl Drop for Dismissal<'_> {
    fn drop(&mut self) {
        self.0.dismiss();
    }
}

#[cfg(test)]
mod tests {
    use super::WATCHDOG_LOOKS_IN_TURNS;
    use crate::exec::plan::{ROUNDS_RUN, RoundsRun};
    use crate::module::Module;
    use crate::options::RunOptions;

    /// Reads shared and local memory before writing them, then leaves its block's number there
    /// for whoever comes next: what a block finds shows how its slot was prepared.
    const LEFTOVERS: &str = r#"
.version 7.0
.target sm_70
.address_size 64

.visible .entry leftovers(.param .u64 out)
{
    .reg .b32 %r<8>;
    .reg .b64 %rd<8>;
    .shared .align 4 .b8 tile[384];
    .local .align 4 .b8 scratch[4];

    ld.param.u64 %rd1, [out];
    cvta.to.global.u64 %rd1, %rd1;
    mov.u32 %r1, %tid.x;
    mov.u32 %r2, %ctaid.x;
    mul.wide.u32 %rd2, %r1, 4;
    mov.u64 %rd3, tile;
    add.u64 %rd3, %rd3, %rd2;
    ld.shared.u32 %r3, [%rd3];
    ld.local.u32 %r4, [scratch];
    add.u32 %r5, %r2, 1;
    st.shared.u32 [%rd3], %r5;
    st.local.u32 [scratch], %r5;
    mad.lo.u32 %r6, %r2, 96, %r1;
    mul.wide.u32 %rd4, %r6, 8;
    add.u64 %rd5, %rd1, %rd4;
    st.global.v2.u32 [%rd5], {%r3, %r4};
    ret;
}
"#;

    /// Blocks that start in a slot an earlier block left, on one core and on three, where the
    /// cores that run them prepare them: each finds shared memory as every block does at its
    /// start (the launch's garbage, not the last block's numbers) and local memory cleared.
    #[test]
    fn a_block_prepared_by_the_core_that_runs_it_finds_a_fresh_slot() {
        let module = Module::parse(LEFTOVERS).unwrap();
        ROUNDS_RUN.with(|r| r.set(RoundsRun::NONE));
        let blocks = 8;
        let memory = |threads: u32, checkers: bool| {
            let options = RunOptions {
                threads,
                racecheck: checkers,
                memcheck: checkers,
                initcheck: false,
                // Two blocks at a time: six start in a slot another left.
                resident_threads: 2 * 96,
                ..RunOptions::default()
            };
            crate::committed::run(&module, "leftovers", blocks, &options)
        };
        for checkers in [false, true] {
            let (report, buffers) = memory(1, checkers);
            let several = memory(3, checkers);
            assert!(
                (&report, &buffers) == (&several.0, &several.1),
                "one core and three differ: {report}\n{}",
                several.0
            );
            let word =
                |i: usize| u32::from_le_bytes(buffers[0][i * 4..i * 4 + 4].try_into().unwrap());
            for block in 0..blocks as usize {
                for tid in 0..96 {
                    let (shared, local) = (
                        word(2 * (block * 96 + tid)),
                        word(2 * (block * 96 + tid) + 1),
                    );
                    assert_eq!(
                        (shared, local),
                        (word(2 * tid), 0),
                        "block {block}, thread {tid}"
                    );
                }
            }
            // The launch's garbage, which no block wrote.
            assert!((0..96).all(|tid| word(2 * tid) > blocks), "{report}");
        }
        let prepared = ROUNDS_RUN.with(|r| r.get()).prepared;
        assert!(prepared >= 6, "{prepared} blocks prepared in their turns");
    }

    /// Every committed kernel, every entry, every schedule, with every checker and with none:
    /// five blocks on several cores end with the report and the memory they end with on one.
    /// With racecheck, entry by entry, two cores run blocks with the detector on the launch's
    /// thread, or four cores run them on two workers while the launch's thread joins their
    /// turns and one shard applies the detector's calls (the piped detector's own test runs it
    /// in more shards); without, three run blocks on two workers, three at a time, so that
    /// blocks also start in slots that earlier blocks left (the corpus's blocks have 96
    /// threads).
    #[test]
    fn every_committed_kernel_runs_alike_on_one_core_and_on_several() {
        ROUNDS_RUN.with(|r| r.set(RoundsRun::NONE));
        let on_cores = |threads: u32| {
            move |options: RunOptions| {
                let one = RunOptions {
                    threads: 1,
                    ..options
                };
                (one, RunOptions { threads, ..options })
            }
        };
        let parse = |ptx: &str| Some((Module::parse(ptx).ok()?, Module::parse(ptx).ok()?));
        // Three schedules per entry: the count of calls tells the entries apart.
        let calls = std::cell::Cell::new(0u32);
        let checked = crate::committed::runs_alike("two or four cores", 5, parse, |options| {
            calls.set(calls.get() + 1);
            let threads = if calls.get().div_ceil(3).is_multiple_of(2) {
                4
            } else {
                2
            };
            on_cores(threads)(options)
        });
        // A watchdog that looks every few rounds, so that turns run past its looks, which the
        // launch then makes from the turns' counts.
        WATCHDOG_LOOKS_IN_TURNS.with(|looks| looks.set(0));
        let unchecked = crate::committed::runs_alike("three cores, no checkers", 5, parse, |o| {
            on_cores(3)(RunOptions {
                racecheck: false,
                synccheck: false,
                memcheck: false,
                initcheck: false,
                resident_threads: 3 * 96,
                watchdog_window: 4096,
                ..o
            })
        });
        let looks = WATCHDOG_LOOKS_IN_TURNS.with(|looks| looks.get());
        assert!(
            looks > 500,
            "{looks} watchdog looks made from turns' counts"
        );
        assert!(
            checked > 300 && unchecked == checked,
            "{checked} and {unchecked} launches"
        );
        let RoundsRun {
            parallel,
            serial,
            stretched,
            prepared,
            past_plan,
            ahead,
            ahead_taken_alone,
            in_line,
            taken_over,
            cut_short,
            met,
        } = ROUNDS_RUN.with(|r| r.get());
        // Both kinds are common in the corpus: most rounds of most kernels run in parallel, and
        // the racy kernels' rounds that meet on global memory (and printf's) run on one core.
        // Many run in stretches: shared-memory trees, tiles' inner loops.
        // Most kernels start with parameter loads, far enough from global memory for the core
        // that runs a new block to prepare it.
        // Most stretched rounds run past the plan: loads, and barriers that wait for the slowest
        // warp, which no count made ahead can see past. Blocks run ahead through trees of
        // barriers, and rounds on one core take some of those rounds. Most serial rounds leave
        // what they found to wait in line behind the turns' (and some join the line first, when
        // it grew long). Loops and trees run longer than a segment, which the share puts back
        // for others to take (about 8,000 times on the 2-core machine). Blocks that stop at one
        // round with footprints apart meet there and run it without the launch (about 1,400
        // times).
        assert!(
            parallel > 30_000
                && serial > 1000
                && stretched > 10_000
                && prepared > 1000
                && past_plan > 10_000
                && ahead > 10_000
                && ahead_taken_alone > 100
                && in_line > serial / 2
                && in_line < serial
                && taken_over > 100
                && cut_short > 1000
                && met > 500,
            "{parallel} parallel ({stretched} in stretches, {past_plan} past the plan) and \
             {serial} serial rounds ({in_line} in line), {ahead} rounds ahead of the launch's \
             ({ahead_taken_alone} taken by serial rounds), {prepared} blocks prepared in their \
             turns, {taken_over} blocks taken over from other shares, {cut_short} segments \
             cut short, {met} rounds met on"
        );
    }
}
