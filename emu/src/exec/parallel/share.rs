//! What a worker runs each turn: its share of the blocks, segment by segment, as far as each may
//! go, and the turn's end, where the block that went least far stopped.

use std::sync::atomic::Ordering;

use super::board::{Board, NOT_COUNTED, OnBoard, Resident, Running, SEGMENT_ROUNDS, Settled};
use super::crew::{Counts, Crew, KEPT_LOGS, PanicAlarm, wait_until};
use crate::exec::block;
use crate::exec::block::Step;
use crate::exec::ctx::Ctx;
use crate::exec::devices::OpCheck;
use crate::exec::plan;
use crate::exec::plan::RoundCount;

/// Runs the warps of the block for `rounds` rounds, one instruction each a round, from the
/// turn's round `from`; what order shows is kept round by round. Returns whether a warp ran in
/// the last round.
///
/// # Safety
/// The block's warps, state and memory are touched by no one else meanwhile.
pub(super) unsafe fn run_segment(
    ctx: &mut Ctx,
    running: &mut Running,
    from: u32,
    rounds: u32,
) -> bool {
    let Resident { warps, state, .. } = &mut running.block;
    let (Some(warps), Some(state)) = (warps.get_mut(0..warps.len()), state.get_mut(0..1)) else {
        return false;
    };
    let state = &mut state[0];
    let mut ran = false;
    for round in from..from + rounds {
        ran = false;
        let before = (ctx.thread_instrs, ctx.thread_steps, ctx.progress);
        // A compiled region ends within the segment: then everyone sees its registers.
        ctx.region_rounds = from + rounds - round;
        if let Step::Ran = block::step_live(ctx, warps, state) {
            ran = true;
        }
        running.turn.counts.push(RoundCount {
            instrs: ctx.thread_instrs - before.0,
            steps: ctx.thread_steps - before.1,
            progress: ctx.progress - before.2,
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
pub(super) unsafe fn run_block(
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
        crate::exec::block::prepare_block(ctx, entry, slot, block, warps);
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
pub(super) unsafe fn run_share(
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
            if !board.runnable(index, bound) {
                continue;
            }
            // Tests widen the windows around taking another's block, which a core the system
            // takes away for a while opens (see below).
            #[cfg(test)]
            if !own {
                super::cores::pause_before_taking_over(crew.jobs.len());
            }
            if !board.take(index) {
                continue;
            }
            #[cfg(test)]
            if !own {
                super::cores::pause_before_taking_over(crew.jobs.len());
            }
            // A block found runnable before the turn was decided over is not run after it:
            // its owner may be ending its turn, and rounds run past that split would join
            // before the rounds the split put ahead (jacobiCudaGraphs on 16 cores).
            if board.over() {
                board.put_back(index, false);
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
        board.wait_for_takes(&crew.failed);
        // SAFETY: the turn settled and no share holds a block, so none is run again.
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
pub(super) unsafe fn end_turns(board: &Board, share: &std::ops::Range<usize>, counts: &mut Counts) {
    let reached = board
        .blocks
        .iter()
        .map(|b| b.reached.load(Ordering::Acquire));
    let ran = reached.min().unwrap_or(0);
    for index in share.clone() {
        // SAFETY: the caller's promise; the share that last ran the block put it back before.
        let running = unsafe { &mut *board.blocks[index].running.get() };
        running.lead = running.turn.split_ahead(ran);
        counts.ahead.add(&running.lead.counted());
        counts.rounds_ahead += running.lead.len() as u64;
        let last = ran
            .checked_sub(1)
            .and_then(|r| running.turn.counts.get(r as usize));
        counts.ran_last |= last.is_some_and(|c| c.ran);
    }
}

impl Crew {
    /// A worker: runs the blocks of its job each round until sent home; returns what its blocks
    /// added to the launch's footprint for racecheck across operations.
    pub(crate) fn work(&self, index: usize, mut ctx: Ctx) -> Option<Box<OpCheck>> {
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
                return ctx.op_check.take();
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
}
