//! A turn as the launch runs it: planned, handed to the crew, and joined in block order.

use std::collections::VecDeque;
use std::sync::Arc;
use std::sync::atomic::Ordering;

use super::board::{Board, Resident, Running};
use super::cores::MIN_PARALLEL_WARPS;
use super::crew::Counts;
use super::crew::{Crew, wait_spinning};
use super::share::run_share;
use crate::exec::ctx::Ctx;
use crate::exec::launch_state::Launch;
use crate::exec::plan::{Lead, LinedUp, RoundCount, Rounds, Waiting};
use crate::exec::timing::Lap;
use crate::exec::views::RawSlice;
use crate::exec::warp::RoundTag;
use crate::race::Racecheck;

/// From this many workers on, the launch's thread runs no blocks of a turn: it joins the
/// previous turn's outcomes while the workers run this one (see [`Launch::parallel_rounds`]),
/// and with a block of its own that join would make it the turn's last core. Tests free it
/// from two, so that the corpus's launches on a few threads take both ways.
#[cfg(not(test))]
const WORKERS_FOR_A_FREE_LAUNCH: usize = 4;
#[cfg(test)]
const WORKERS_FOR_A_FREE_LAUNCH: usize = 2;

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
        // Decided before the clock starts: a launch of few live warps asks this every round,
        // and reading the clocks took a fifth of such a launch.
        let live_warps: u32 = resident
            .iter()
            .filter_map(|&slot| self.blocks.get(slot as usize))
            .map(|state| state.live_warps.count_ones())
            .sum();
        rounds.few_live_warps = live_warps < MIN_PARALLEL_WARPS;
        if rounds.few_live_warps {
            rounds.serial_rounds += 1;
            rounds.few_live_rounds += 1;
            rounds.forget();
            return None;
        }
        let planning = Lap::start(self.ctx.detector_time());
        let before = RoundCount {
            instrs: self.ctx.thread_instrs,
            steps: self.ctx.thread_steps,
            progress: self.ctx.progress,
            ran: false,
        };
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
        let (mine, theirs) =
            rounds
                .by_slot
                .split_at(launch_share(resident.len(), workers, self.detector_here));
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
        let mut ahead_counted = RoundCount::default();
        let mut of_slot = |slot: u32| {
            let at = slot as usize;
            let fresh = unprepared.get_mut(at).and_then(Option::take);
            *prepared += fresh.is_some() as u64;
            let lead = leads.get_mut(at).map(std::mem::take).unwrap_or_default();
            ahead_counted.add(&lead.counted());
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
        self.ctx.thread_instrs += ahead_counted.instrs;
        self.ctx.thread_steps += ahead_counted.steps;
        self.ctx.progress += ahead_counted.progress;
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
        #[cfg(not(test))]
        let joined_enough = finished;
        #[cfg(test)]
        let joined_enough =
            || finished() || super::cores::JOINS_FALL_BEHIND.with(|behind| behind.get());
        self.join_until(&mut rounds.waiting, joined_enough);
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
        // At most the turn that just ended waits in line: when the joins fell a whole turn
        // behind (a race detector on this thread, slower than the blocks it checks), they
        // catch up now, with the workers idle, or the line would grow without end (a
        // shared-memory histogram on two cores held 11 GB of calls after a minute).
        if rounds
            .waiting
            .iter()
            .any(|waiting| matches!(waiting, Waiting::Turn(_)))
        {
            self.join_waiting(&mut rounds.waiting);
        }
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
        self.ctx.thread_instrs -= ended.ahead.instrs;
        self.ctx.thread_steps -= ended.ahead.steps;
        self.ctx.progress -= ended.ahead.progress;
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
        if self.ctx.thread_steps >= self.watchdog.next_check {
            let mut counts = vec![RoundCount::default(); ran as usize];
            for &slot in resident {
                if let Some(turn) = rounds.turns[slot as usize].as_ref() {
                    for (sum, count) in counts.iter_mut().zip(&turn.counts) {
                        sum.add(count);
                    }
                }
            }
            self.watchdog_rounds(&counts, before);
        }
        // In line for the join, to come out round by round in block order, as one core would
        // have made them.
        let mut turns = Vec::with_capacity(resident.len());
        for &slot in resident {
            if let Some(mut turn) = rounds.turns[slot as usize].take() {
                rounds.ahead[slot as usize] = turn.ahead.take();
                let lead_now = rounds.lead(slot);
                for outcome in &turn.outcomes {
                    rounds.lined(outcome, "from a turn", &|| {
                        format!(
                            "the turn ran {ran} rounds; this block's: {}; its lead now {lead_now} rounds",
                            crate::exec::plan::describe_turn(&turn)
                        )
                    });
                }
                turns.push(turn);
            }
        }
        rounds.waiting.push_back(Waiting::Turn(LinedUp::new(turns)));
        #[cfg(test)]
        super::cores::MOST_TURNS_IN_LINE.with(|most| {
            let now = rounds
                .waiting
                .iter()
                .filter(|waiting| matches!(waiting, Waiting::Turn(_)))
                .count();
            most.set(most.get().max(now));
        });
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
        self.ctx.thread_steps += count.steps;
        self.ctx.progress += count.progress;
        if let Some(outcome) = outcome {
            if in_line {
                // What the blocks before it in this round left comes first.
                if self.ctx.made_ordered() {
                    let before = self.ctx.outcome();
                    rounds.lined(&before, "before a round from the lead", &String::new);
                    rounds.waiting.push_back(Waiting::Outcome(before));
                }
                rounds.lined(&outcome, "from the lead", &String::new);
                rounds.waiting.push_back(Waiting::Outcome(outcome));
            } else {
                rounds.lined(&outcome, "at once, from the lead", &String::new);
                self.ctx.join(outcome, RoundTag::AT_ONCE);
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
                        self.ctx.join(outcome, RoundTag::FROM_TURN);
                    }
                }
                Waiting::Outcome(outcome) => self.ctx.join(outcome, RoundTag::FROM_LINE),
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
/// smaller one when the blocks do not divide evenly. When the race detector runs on the
/// launch's core and took `detector` of the work last time, the launch takes what leaves it
/// as busy as each worker: with the detector at `f` of the work and the blocks at `1 - f`, a
/// part `x` of the blocks makes `f + x (1 - f)` against `(1 - x) (1 - f) / workers`. A
/// shared-memory histogram's detector is half its work: on two cores the launch then takes
/// no blocks, where an even share made it the last of every turn.
pub(super) fn launch_share(blocks: usize, workers: usize, detector: Option<f64>) -> usize {
    if workers >= WORKERS_FOR_A_FREE_LAUNCH {
        return 0;
    }
    let even = blocks / (workers + 1);
    match detector {
        Some(f) if f.is_finite() && (0.0..1.0).contains(&f) => {
            let w = workers as f64;
            let part = ((1.0 - f) - f * w) / ((1.0 - f) * (w + 1.0));
            ((part.max(0.0) * blocks as f64).floor() as usize).min(even)
        }
        _ => even,
    }
}
