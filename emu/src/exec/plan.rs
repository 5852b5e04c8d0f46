//! Which rounds of the hardware schedule may run on several cores, and how many at a time.
//!
//! Before a round, each resident block's coming rounds are known well enough: how long its live
//! lanes change nothing beyond the block, loads of global memory allowed (its *quiet stretch*,
//! from `stretch.rs`), and otherwise which bytes of global memory its next instructions may touch
//! (its *footprint*). While every block is quiet no one writes global memory, so they run that
//! many rounds apart; blocks whose footprints do not meet on bytes one of them writes run one
//! round apart; anything else runs on one core. `parallel/` runs what this plans.

use super::allocs::{LOCAL_WIN, SHARED_WIN, WIN};
use super::collector::Collector;
use super::ctx::Ctx;
use super::launch_state::Launch;
use super::prefix::Overlay;
use super::warp::{BlockState, Warp, guarded};
use crate::error::EmuError;
use crate::ir::*;
use crate::race;
use crate::stretch::MAX_STRETCH;

/// How far apart a warp's lanes' addresses may lie and still make one span: lanes close together
/// make one, scattered ones (a column of a matrix) one each.
const SPAN_SLACK: u64 = 64;

/// Global memory a block may touch in a round: `start..end`, byte by byte (initcheck's bits of
/// global memory are set atomically, so blocks may write different bytes of one line at once).
#[derive(Clone, Copy)]
struct Span {
    start: u64,
    end: u64,
    writes: bool,
    /// The block's slot.
    slot: u32,
}

/// Where a block may touch global memory in its next turn: a few spans, sorted and merged; or
/// `None` when its next turn needs the launch to itself.
type Footprint = Option<Vec<Span>>;

/// What a block's coming rounds may do, made right after its turn.
pub(super) struct Ahead {
    /// Rounds it surely changes nothing beyond itself: no lane writes global memory, reaches
    /// the launch, or its function's end (see `stretch.rs`); loads may come. When every
    /// resident block is quiet, no one writes what the loads read, so the blocks run apart.
    stretch: u32,
    /// Where it may touch global memory in the next round; empty when `stretch` is not 0.
    footprint: Footprint,
}

/// A block's turn on several cores: what it did, and what its next rounds may do. Rounds count
/// from the turn's start; a block that ran ahead of the others (see `parallel/`) has more of
/// them than the turn.
pub(crate) struct Turn {
    /// The rounds that left something whose order matters (findings, race-detector calls, a
    /// stop), and for each what the block did up to its end since the one before.
    pub(super) rounds: Vec<u32>,
    pub(super) outcomes: Vec<Outcome>,
    /// What its next rounds may do, if a share took it (see `parallel/`).
    pub(super) ahead: Option<Ahead>,
    /// Per round: the thread-instructions and steps it ran, the progress it made, and whether a warp ran
    /// (the watchdog's looks inside the turn are made from them).
    pub(super) counts: Vec<RoundCount>,
}

/// What a block's round did that the launch counts.
#[derive(Clone, Copy, Default)]
pub(super) struct RoundCount {
    pub(super) instrs: u64,
    pub(super) steps: u64,
    pub(super) progress: u64,
    pub(super) ran: bool,
}

impl RoundCount {
    /// Adds `other`'s thread-instructions, steps and progress.
    pub(super) fn add(&mut self, other: &RoundCount) {
        self.instrs += other.instrs;
        self.steps += other.steps;
        self.progress += other.progress;
    }
}

/// The rounds a block ran ahead of the launch's: rounds that keep to the block (no global
/// memory, not even loads, and no end), which it ran while others had yet to reach the round
/// where one of them writes. They wait here, counts and outcomes, until the launch's rounds
/// reach them: a round on one core takes the block's from here instead of running it, and the
/// block's next turn starts after them.
#[derive(Default)]
pub(super) struct Lead {
    /// Per round ahead, first to last.
    counts: std::collections::VecDeque<RoundCount>,
    /// The rounds that left an outcome, counted from the first round ahead, and the outcomes.
    outcomes: std::collections::VecDeque<(u32, Outcome)>,
    /// Rounds ahead already taken, which the rounds of `outcomes` count from.
    taken: u32,
}

impl Lead {
    /// Rounds the block is ahead.
    pub(super) fn len(&self) -> u32 {
        self.counts.len() as u32
    }

    /// The first round ahead, which the launch's rounds just reached: its counts, and its
    /// outcome if it left one.
    pub(super) fn take_round(&mut self) -> Option<(RoundCount, Option<Outcome>)> {
        let count = self.counts.pop_front()?;
        let outcome = match self.outcomes.front() {
            Some(&(round, _)) if round == self.taken => self
                .outcomes
                .pop_front()
                .map(|(_, outcome)| outcome.marked(super::warp::RoundTag::TAKEN_ALONE)),
            _ => None,
        };
        self.taken += 1;
        if self.counts.is_empty() {
            self.taken = 0;
        }
        Some((count, outcome))
    }

    /// The rounds ahead as the start of the block's next turn.
    pub(super) fn into_turn(self) -> Turn {
        let taken = self.taken;
        if self
            .outcomes
            .iter()
            .any(|&(round, _)| round < taken || round - taken >= self.counts.len() as u32)
            || !self.outcomes.iter().map(|(r, _)| *r).is_sorted()
        {
            race::calls_out_of_order(&format!(
                "a lead's outcomes do not fit its rounds: {taken} taken, {} rounds left, outcomes at rounds {:?}",
                self.counts.len(),
                self.outcomes.iter().map(|(r, _)| *r).collect::<Vec<_>>()
            ));
        }
        let (rounds, outcomes) = self
            .outcomes
            .into_iter()
            .map(|(round, outcome)| {
                let outcome = outcome.marked(super::warp::RoundTag::INTO_NEXT_TURN);
                (round - taken, outcome)
            })
            .unzip();
        Turn {
            rounds,
            outcomes,
            ahead: None,
            counts: self.counts.into(),
        }
    }

    /// The thread-instructions, steps and progress of the rounds ahead, which the launch's
    /// counters leave out until its rounds reach them (the step budget and the watchdog count
    /// one core's rounds).
    pub(super) fn counted(&self) -> RoundCount {
        let mut sum = RoundCount::default();
        self.counts.iter().for_each(|c| sum.add(c));
        sum
    }
}

impl Turn {
    /// Ends the turn after round `ran`: the rounds the block ran past it are ahead of the
    /// launch's.
    pub(super) fn split_ahead(&mut self, ran: u32) -> Lead {
        if !self.rounds.is_sorted()
            || self
                .rounds
                .last()
                .is_some_and(|&r| r >= self.counts.len() as u32)
            || self.rounds.len() != self.outcomes.len()
            || (self.counts.len() as u32) < ran
        {
            race::calls_out_of_order(&format!(
                "a turn split after round {ran} does not fit its rounds: {}",
                describe_turn(self)
            ));
        }
        let beyond = self.rounds.partition_point(|&round| round < ran);
        let rounds = self.rounds.split_off(beyond).into_iter();
        Lead {
            counts: self.counts.split_off(ran as usize).into(),
            outcomes: (rounds.map(|round| round - ran))
                .zip(
                    self.outcomes
                        .split_off(beyond)
                        .into_iter()
                        .map(|outcome| outcome.marked(super::warp::RoundTag::AHEAD)),
                )
                .collect(),
            taken: 0,
        }
    }
}

/// What a block did in its turn that the launch adds to its own, in block order.
/// Its counters are not here: they add up in any order, so the share sums them as it goes.
/// What is here is small (the launch's thread moves one per block and round that made
/// something, from the core that made it), and rarely more than a log.
pub(super) struct Outcome {
    pub(super) findings: Option<Box<Collector>>,
    pub(super) log: Option<race::Logged>,
    pub(super) refusal: Option<Box<EmuError>>,
    /// The blocks' rounds whose calls `log` holds, in order.
    pub(super) tags: Vec<super::warp::RoundTag>,
}

impl Outcome {
    /// This outcome with `step` added to its tags' paths.
    fn marked(mut self, step: u16) -> Outcome {
        self.tags = super::warp::RoundTag::marked(self.tags, step);
        self
    }
}

/// The launch's side of its rounds on several cores: what the resident blocks' coming rounds
/// may do, and how many rounds ran how.
#[derive(Default)]
pub(crate) struct Rounds {
    /// Per slot: what the block's coming rounds may do, if known (a worker makes it right after
    /// the block's turn, while the block's warps are still in its cache).
    pub(super) ahead: Vec<Option<Ahead>>,
    /// The round's slots in slot order, and per slot its block's turn.
    pub(super) by_slot: Vec<u32>,
    pub(super) turns: Vec<Option<Turn>>,
    /// The views the workers hold were made for this many slots.
    pub(super) views_for: usize,
    /// The last round ran on one core because too few warps had live lanes to share out (see
    /// `parallel::MIN_PARALLEL_WARPS`): its findings and calls join at once, not in line.
    pub(crate) few_live_warps: bool,
    /// Rounds to run on one core before looking at footprints again, and how many the next
    /// refusal makes: kernels whose blocks meet on every round pay for no footprints.
    skip: u32,
    backoff: u32,
    /// Rounds run on several cores, and on one because blocks met or an instruction needed it.
    pub(super) parallel_rounds: u64,
    pub(super) serial_rounds: u64,
    /// Rounds run on several cores in stretches of two or more between joins, and of them
    /// those run past the plan, as the blocks found they all stayed quiet longer.
    pub(super) stretched_rounds: u64,
    pub(super) past_plan_rounds: u64,
    /// Blocks prepared by the core that ran them.
    pub(super) prepared_in_turns: u64,
    /// Rounds on one core whose findings and calls waited in line behind turns'.
    pub(crate) in_line_rounds: u64,
    /// Rounds on one core because few warps had live lanes (see `few_live_warps`).
    pub(crate) few_live_rounds: u64,
    /// Per slot: the block claimed there and not yet made ready, which the core that runs it
    /// prepares in its turn.
    pub(super) unprepared: Vec<Option<u64>>,
    /// Per slot: the rounds its block ran ahead of the launch's, if any.
    pub(super) leads: Vec<Lead>,
    /// Rounds blocks ran ahead of the launch's, and of them those a round on one core took.
    pub(super) rounds_ahead: u64,
    pub(super) ahead_taken_alone: u64,
    /// What waits to join the launch's findings and race-detector calls, in one core's order:
    /// the turns' outcomes round by round in block order (their counters already joined), and
    /// the blocks that finished and started between turns. The launch joins it while workers
    /// run, as far as it gets before they finish (see `parallel/`).
    pub(super) waiting: std::collections::VecDeque<Waiting>,
    /// Per slot, the last round whose calls were put in line (see [`Rounds::lined`]).
    pub(super) last_lined: Vec<Option<super::warp::RoundTag>>,
}

impl Rounds {
    /// An outcome enters the line, at `stage`: each block's rounds must enter it in the order
    /// the block ran them, as they must reach the detector (`Ctx::calls_reach_detector`).
    /// Checked here too, so that a misorder is named where it starts, with `detail`.
    pub(super) fn lined(&mut self, outcome: &Outcome, stage: &str, detail: &dyn Fn() -> String) {
        for tag in &outcome.tags {
            if let Some(last) = tag.came_after(&mut self.last_lined) {
                race::calls_out_of_order(&format!(
                    "block {} (slot {}) round {}'s race-detector calls ({}) were put in line {stage} after its round {}'s ({}); {}",
                    tag.block,
                    tag.slot,
                    tag.round,
                    super::warp::RoundTag::path_words(tag.path),
                    last.round,
                    super::warp::RoundTag::path_words(last.path),
                    detail()
                ));
            }
        }
    }
}

/// A turn's rounds, counts and outcomes' round tags, in short, for an internal error.
pub(super) fn describe_turn(turn: &Turn) -> String {
    let tags: Vec<String> = turn
        .outcomes
        .iter()
        .zip(&turn.rounds)
        .map(|(o, r)| {
            let t: Vec<String> = o
                .tags
                .iter()
                .map(|t| format!("b{}r{}", t.block, t.round))
                .collect();
            format!("{r}:[{}]", t.join(","))
        })
        .collect();
    let shown = if tags.len() > 12 {
        format!(
            "{} … {}",
            tags[..6].join(" "),
            tags[tags.len() - 6..].join(" ")
        )
    } else {
        tags.join(" ")
    };
    format!(
        "counts {} outcomes {} rounds {shown}",
        turn.counts.len(),
        turn.outcomes.len()
    )
}

/// Something in line to join the launch's findings and race-detector calls.
pub(super) enum Waiting {
    Outcome(Outcome),
    /// A turn's blocks' outcomes, which come out in one core's order as the join takes them.
    Turn(LinedUp),
    Started {
        slot: u32,
        block: u64,
    },
    Finished {
        slot: u32,
    },
}

/// A turn's outcomes in line, round by round and in block order, as one core would have made
/// them. Put in order as the join takes them, while the workers run the next turn, rather than
/// between turns.
pub(super) struct LinedUp {
    /// Per block, in block order: the rounds that left an outcome, how many of them came out,
    /// and the outcomes still in line.
    blocks: Vec<(Vec<u32>, usize, std::vec::IntoIter<Outcome>)>,
    /// The round coming out, and the next block to look at in it.
    round: u32,
    next: usize,
}

impl LinedUp {
    /// `turns` in block order.
    pub(super) fn new(turns: Vec<Turn>) -> LinedUp {
        let blocks = turns
            .into_iter()
            .map(|turn| (turn.rounds, 0, turn.outcomes.into_iter()))
            .collect();
        let mut lined = LinedUp {
            blocks,
            round: 0,
            next: 0,
        };
        lined.round = lined.first_round_left();
        lined
    }

    /// The earliest round some block has an outcome of left in line.
    fn first_round_left(&self) -> u32 {
        let left = self.blocks.iter().filter_map(|(done, at, _)| done.get(*at));
        left.copied().min().unwrap_or(u32::MAX)
    }
}

impl Iterator for LinedUp {
    type Item = Outcome;

    fn next(&mut self) -> Option<Outcome> {
        while self.round != u32::MAX {
            while let Some((done, at, outcomes)) = self.blocks.get_mut(self.next) {
                self.next += 1;
                if done.get(*at) == Some(&self.round) {
                    *at += 1;
                    if let Some(outcome) = outcomes.next() {
                        return Some(outcome);
                    }
                }
            }
            self.round = self.first_round_left();
            self.next = 0;
        }
        None
    }
}

/// Rounds a refused round's successors run on one core at most before looking again.
const MAX_BACKOFF: u32 = 64;

/// A thread's launches' rounds, for tests to see that each way of running them happens.
#[cfg(test)]
#[derive(Clone, Copy)]
pub(crate) struct RoundsRun {
    /// Rounds run on several cores, on one, and in stretches.
    pub(crate) parallel: u64,
    pub(crate) serial: u64,
    pub(crate) stretched: u64,
    /// Blocks prepared in their turns.
    pub(crate) prepared: u64,
    /// Rounds run past those planned, as the blocks found they stayed quiet longer.
    pub(crate) past_plan: u64,
    /// Rounds blocks ran ahead of the launch's, and of them those a round on one core took.
    pub(crate) ahead: u64,
    pub(crate) ahead_taken_alone: u64,
    /// Rounds on one core whose findings and calls waited in line behind turns'.
    pub(crate) in_line: u64,
    /// Rounds on one core because few warps had live lanes, which never wait in line.
    pub(crate) few_live: u64,
    /// Segments of blocks a share ran for another, and segments cut short with rounds left.
    pub(crate) taken_over: u64,
    pub(crate) cut_short: u64,
    /// Turns in which every block stopped at one round and the shares let them all run it.
    pub(crate) met: u64,
}

#[cfg(test)]
impl RoundsRun {
    pub(crate) const NONE: RoundsRun = RoundsRun {
        parallel: 0,
        serial: 0,
        stretched: 0,
        prepared: 0,
        past_plan: 0,
        ahead: 0,
        ahead_taken_alone: 0,
        in_line: 0,
        few_live: 0,
        taken_over: 0,
        cut_short: 0,
        met: 0,
    };
}

#[cfg(test)]
thread_local! {
    pub(crate) static ROUNDS_RUN: std::cell::Cell<RoundsRun> =
        const { std::cell::Cell::new(RoundsRun::NONE) };
}

impl Rounds {
    /// Counts the launch's rounds, the segments of blocks its shares ran for others and those
    /// cut short, and the rounds its shares met on, where tests can see them.
    #[cfg_attr(not(test), allow(unused_variables))]
    pub(crate) fn tally(&self, taken_over: u64, cut_short: u64, met: u64) {
        #[cfg(test)]
        ROUNDS_RUN.with(|r| {
            let run = r.get();
            r.set(RoundsRun {
                parallel: run.parallel + self.parallel_rounds,
                serial: run.serial + self.serial_rounds,
                stretched: run.stretched + self.stretched_rounds,
                prepared: run.prepared + self.prepared_in_turns,
                past_plan: run.past_plan + self.past_plan_rounds,
                ahead: run.ahead + self.rounds_ahead,
                ahead_taken_alone: run.ahead_taken_alone + self.ahead_taken_alone,
                in_line: run.in_line + self.in_line_rounds,
                few_live: run.few_live + self.few_live_rounds,
                taken_over: run.taken_over + taken_over,
                cut_short: run.cut_short + cut_short,
                met: run.met + met,
            });
        });
    }

    /// How many rounds of `resident` (slots, in block order) may run on several cores before
    /// the launch joins them, at most `most`; `None` when the next round must run on one core.
    /// When every block keeps to itself for a while, they run that long apart; otherwise one
    /// round, when their footprints do not meet.
    pub(super) fn plan(&mut self, launch: &Launch, resident: &[u32], most: u32) -> Option<u32> {
        if self.skip > 0 {
            self.skip -= 1;
            return None;
        }
        let wpb = launch.ctx.wpb as usize;
        let mut stretch = MAX_STRETCH;
        for &slot in resident {
            let slot = slot as usize;
            if self.ahead.len() <= slot {
                self.ahead.resize_with(slot + 1, || None);
            }
            let ahead = self.ahead[slot].get_or_insert_with(|| {
                let warps = &launch.warps[slot * wpb..(slot + 1) * wpb];
                ahead(&launch.ctx, warps, &launch.blocks[slot], slot as u32)
            });
            // A block ahead is quiet until the launch's rounds reach it, and then as it is.
            stretch = stretch.min(ahead.stretch + self.lead(slot as u32));
        }
        if stretch > 0 {
            return self.accept(stretch.min(most).max(1));
        }
        // A block ahead touches no global memory in this round.
        let now = resident.iter().filter(|&&slot| self.lead(slot) == 0);
        let apart = next_round_apart(now.map(|&slot| self.ahead[slot as usize].as_ref()));
        if apart { self.accept(1) } else { self.refuse() }
    }

    /// Rounds the block in `slot` ran ahead of the launch's.
    pub(crate) fn lead(&self, slot: u32) -> u32 {
        self.leads.get(slot as usize).map_or(0, Lead::len)
    }

    fn accept(&mut self, rounds: u32) -> Option<u32> {
        self.backoff = 0;
        Some(rounds)
    }

    fn refuse(&mut self) -> Option<u32> {
        self.skip = self.backoff;
        self.backoff = (self.backoff * 2).clamp(1, MAX_BACKOFF);
        None
    }

    /// The blocks' turns changed them: their footprints must be made again.
    pub(super) fn forget(&mut self) {
        self.ahead.iter_mut().for_each(|a| *a = None);
    }

    /// A new block started in `slot`.
    pub(crate) fn started(&mut self, slot: u32) {
        if let Some(a) = self.ahead.get_mut(slot as usize) {
            *a = None;
        }
    }

    /// Block `block` was claimed in `slot` with its warps yet to be made ready: when they
    /// would keep to the block (`stretch` rounds), or write nothing beyond it (`quiet`), for a
    /// while from the kernel's first instruction, the core that runs the block prepares it in
    /// its turn; otherwise (false) the launch must prepare it now, since its footprint needs
    /// its registers.
    pub(crate) fn start_later(&mut self, slot: u32, block: u64, stretch: u32, quiet: u32) -> bool {
        if stretch == 0 && quiet == 0 {
            return false;
        }
        let slot = slot as usize;
        if self.ahead.len() <= slot {
            self.ahead.resize_with(slot + 1, || None);
        }
        if self.unprepared.len() <= slot {
            self.unprepared.resize(slot + 1, None);
        }
        // Every warp of a fresh block is at the entry with all its lanes: what `ahead` would
        // find once it was ready, but for the footprint of a first step that loads global
        // memory (its addresses need the registers), which leaves a round where another block
        // writes to one core, where the launch prepares the block first.
        self.ahead[slot] = Some(Ahead {
            stretch: quiet,
            footprint: (stretch > 0).then(Vec::new),
        });
        self.unprepared[slot] = Some(block);
        true
    }

    /// The block claimed in `slot` and not yet made ready, if any: for the core that runs it,
    /// or for the launch before it runs a round alone.
    pub(crate) fn take_unprepared(&mut self, slot: u32) -> Option<u64> {
        self.unprepared.get_mut(slot as usize)?.take()
    }
}

/// What the block's coming rounds may do: how long its warps change nothing beyond the block,
/// and, when they may touch global memory in the next round, where.
pub(super) fn ahead(ctx: &Ctx, warps: &[Warp], state: &BlockState, slot: u32) -> Ahead {
    let (stretch, quiet) = stretches(ctx, warps, state);
    ahead_from(ctx, warps, state, slot, stretch, quiet)
}

/// [`ahead`], with the block's [`stretches`] already counted.
pub(super) fn ahead_from(
    ctx: &Ctx,
    warps: &[Warp],
    state: &BlockState,
    slot: u32,
    stretch: u32,
    quiet: u32,
) -> Ahead {
    // A block about to load global memory needs its footprint too: it may share a round with
    // a block that writes.
    Ahead {
        stretch: quiet,
        footprint: if stretch == 0 {
            footprint(ctx, warps, state, slot)
        } else {
            Some(Vec::new())
        },
    }
}

/// The rounds the block's warps surely keep to the block, and the rounds it surely changes
/// nothing beyond itself: no lane writes beyond it or reaches the launch, and it does not finish
/// before the last of them (finishing lets the launch start the next block, which it does after
/// a turn's last round as one core does after any round; a block finishes when its farthest
/// lane ends its thread, a round after it reaches its end). Neither once it has finished.
pub(super) fn stretches(ctx: &Ctx, warps: &[Warp], state: &BlockState) -> (u32, u32) {
    if state.live == 0 {
        return (0, 0);
    }
    // Per lane: (stretch, quiet, finish), the first two the fewest, the last the most.
    let mut counts = (MAX_STRETCH, MAX_STRETCH, 0);
    let lane_at = |counts: &mut (u32, u32, u32), pc: u32| {
        counts.0 = counts.0.min(ctx.m.stretch_at(pc));
        counts.1 = counts.1.min(ctx.m.quiet_at(pc));
        counts.2 = counts.2.max(ctx.m.exit_at(pc));
    };
    for w in warps {
        if w.active != 0 {
            lane_at(&mut counts, w.pc);
        }
        // Lanes left behind by a branch mostly wait at one pc (a tree's `if (tid < s)`): each
        // pc counts once, which was most of a segment's looking at its block.
        let mut last_pc = None;
        lanes!(w.live & !w.active, l, {
            let pc = w.lane_pc[l];
            if last_pc != Some(pc) {
                last_pc = Some(pc);
                lane_at(&mut counts, pc);
            }
        });
        if counts.0 == 0 && counts.1 == 0 {
            return (0, 0);
        }
    }
    let (stretch, quiet, finish) = counts;
    (stretch, quiet.min(finish + 1))
}

/// Whether the next round of blocks whose coming rounds are `aheads` may run on several cores:
/// every footprint known, and none meeting another on bytes one of them writes. The launch asks
/// it at a turn's start ([`Rounds::plan`]), a share when every block of its turn stopped at one
/// round (see `parallel/`).
pub(super) fn next_round_apart<'a>(aheads: impl Iterator<Item = Option<&'a Ahead>>) -> bool {
    let mut spans = Vec::new();
    for ahead in aheads {
        match ahead.and_then(|a| a.footprint.as_ref()) {
            Some(footprint) => spans.extend_from_slice(footprint),
            None => return false,
        }
    }
    spans.sort_unstable_by_key(|s| s.start);
    // Spans that overlap, directly or through others, form a cluster; a cluster that a block
    // writes and another touches makes the round run on one core.
    let mut spans = spans.iter();
    let Some(first) = spans.next() else {
        return true;
    };
    let (mut end, mut slot, mut writes, mut shared) = (first.end, first.slot, first.writes, false);
    for s in spans {
        if s.start >= end {
            if shared && writes {
                return false;
            }
            (end, slot, writes, shared) = (s.end, s.slot, s.writes, false);
            continue;
        }
        end = end.max(s.end);
        writes |= s.writes;
        shared |= s.slot != slot;
    }
    !(shared && writes)
}

/// Where the block's warps may touch global memory in their next turn.
fn footprint(ctx: &Ctx, warps: &[Warp], state: &BlockState, slot: u32) -> Footprint {
    let mut spans = Vec::new();
    if !block_spans(ctx, warps, state, slot, &mut spans) {
        return None;
    }
    spans.sort_unstable_by_key(|s| s.start);
    let mut merged: Vec<Span> = Vec::with_capacity(spans.len().min(8));
    for s in spans {
        match merged.last_mut() {
            Some(last) if s.start <= last.end => {
                last.end = last.end.max(s.end);
                last.writes |= s.writes;
            }
            _ => merged.push(s),
        }
    }
    Some(merged)
}

/// Adds the spans of global memory that the block's warps may touch in this round; false when
/// the round must run on one core.
fn block_spans(
    ctx: &Ctx,
    warps: &[Warp],
    state: &BlockState,
    slot: u32,
    out: &mut Vec<Span>,
) -> bool {
    // A `bar.red` result is written into the registers of the warps it releases, which may then
    // use it in the same round.
    if state.bars.iter().any(|b| b.red_dest && b.arrived > 0) {
        return false;
    }
    for w in warps {
        let mut waiting = w.live & !w.active;
        if w.active != 0 && !instr_spans(ctx, w, w.pc, w.active, slot, out) {
            return false;
        }
        while waiting != 0 {
            let pc = w.lane_pc[waiting.trailing_zeros() as usize];
            let mut at_pc = 0u32;
            lanes!(waiting, l, {
                if w.lane_pc[l] == pc {
                    at_pc |= 1 << l;
                }
            });
            waiting &= !at_pc;
            if !instr_spans(ctx, w, pc, at_pc, slot, out) {
                return false;
            }
        }
    }
    true
}

/// Adds the spans the lanes `lanes` at `pc` touch in their next step; false when it needs the
/// launch to itself.
fn instr_spans(ctx: &Ctx, w: &Warp, pc: u32, lanes: u32, slot: u32, out: &mut Vec<Span>) -> bool {
    if ctx.m.ends_step(pc) {
        return access_spans(ctx, w, pc, lanes, slot, out, None);
    }
    // A step runs the lanes' own instructions first (`block::step`), which may compute the
    // address of the access that ends it: unless they surely reach nothing beyond the block in
    // it, follow them there.
    ctx.m.stretch_at(pc) > 0
        || super::prefix::walk(ctx, w, pc, lanes, &mut |pc, lanes, regs| {
            access_spans(ctx, w, pc, lanes, slot, out, Some(regs))
        })
}

/// Adds the spans the instruction at `pc`, which ends a step, touches for `lanes`, whose
/// registers are the warp's or, after the private start of their step, `regs`; false when it
/// needs the launch to itself.
fn access_spans(
    ctx: &Ctx,
    w: &Warp,
    pc: u32,
    lanes: u32,
    slot: u32,
    out: &mut Vec<Span>,
    regs: Option<&Overlay>,
) -> bool {
    let Some(ins) = ctx.m.code.get(pc as usize) else {
        return true;
    };
    let lanes = match regs {
        None => guarded(w, ins.guard, lanes),
        Some(regs) => match regs.guarded(ctx, w, ins.guard, lanes) {
            Some(lanes) => lanes,
            None => return false,
        },
    };
    match ins.op.reach() {
        Reach::Global => {}
        Reach::Launch => return lanes == 0,
        Reach::Block => return true,
    }
    if lanes == 0 {
        return true;
    }
    let (space, addr, bytes, writes) = match &ins.op {
        Op::Ld {
            space,
            ty,
            ds,
            addr,
            ..
        } => (*space, addr, ty.bytes() * ds.len() as u32, false),
        Op::St {
            space,
            ty,
            vals,
            addr,
            ..
        } => (*space, addr, ty.bytes() * vals.len() as u32, true),
        Op::Atom {
            space, ty, addr, ..
        } => (*space, addr, ty.bytes(), true),
        Op::CpAsync { src, size, .. } => (Space::Global, src, *size, false),
        // An instruction reaching global memory at addresses this does not know how to tell:
        // the round runs on one core.
        _ => return false,
    };
    let generic = space == Space::Generic;
    let bytes = bytes.max(1) as u64;
    let (mut low, mut high, mut count) = (u64::MAX, 0u64, 0u32);
    let mut addrs = [0u64; 32];
    let mut known = true;
    lanes!(lanes, l, {
        let a = match regs {
            None => ctx.addr(w, addr, l),
            Some(regs) => regs.addr(ctx, w, addr, l).unwrap_or_else(|| {
                known = false;
                0
            }),
        };
        let block_own = (SHARED_WIN..SHARED_WIN + WIN).contains(&a)
            || (LOCAL_WIN..LOCAL_WIN + WIN).contains(&a);
        if !(generic && block_own) {
            low = low.min(a);
            high = high.max(a.saturating_add(bytes));
            addrs[count as usize] = a;
            count += 1;
        }
    });
    if !known {
        return false;
    }
    if count == 0 {
        return true;
    }
    let span = |start: u64, end: u64| Span {
        start,
        end,
        writes,
        slot,
    };
    // Lanes close together make one span; scattered ones (a column of a matrix) one each, so
    // that blocks writing neighbouring columns do not seem to meet.
    if high - low <= 2 * count as u64 * bytes + SPAN_SLACK {
        out.push(span(low, high));
    } else {
        out.extend(
            addrs[..count as usize]
                .iter()
                .map(|&a| span(a, a.saturating_add(bytes))),
        );
    }
    true
}

/// Rounds that may run before one core would look at the launch again: at most `until_stall`,
/// and only as many as end before thread-instruction `due` at `per_round` each (all but the last
/// round must end before it); at least one, at most [`MAX_STRETCH`].
pub(super) fn rounds_unwatched(
    until_stall: Option<u64>,
    per_round: u64,
    instrs: u64,
    due: u64,
) -> u32 {
    let left = due.saturating_sub(instrs);
    let before_due = left.saturating_sub(1) / per_round.max(1) + 1;
    let most = until_stall.unwrap_or(u64::MAX).min(before_due);
    most.clamp(1, MAX_STRETCH as u64) as u32
}

#[cfg(test)]
mod tests {
    use super::{MAX_STRETCH, rounds_unwatched};

    #[test]
    fn a_stretch_ends_where_one_core_would_look_at_the_launch() {
        // Three rounds to a stall that starts another block.
        assert_eq!(rounds_unwatched(Some(3), 100, 0, u64::MAX), 3);
        assert_eq!(rounds_unwatched(None, 100, 0, u64::MAX), MAX_STRETCH);
        // Rounds of 100 from 1,000 with the budget at 1,350: after the third, 1,300 is not yet
        // due; the fourth may reach it, and ends the stretch.
        assert_eq!(rounds_unwatched(None, 100, 1000, 1350), 4);
        assert_eq!(rounds_unwatched(None, 100, 1000, 1301), 4);
        assert_eq!(rounds_unwatched(None, 100, 1000, 1300), 3);
        // Due already, or the next round: one round, and the launch looks.
        assert_eq!(rounds_unwatched(None, 100, 1000, 900), 1);
        assert_eq!(rounds_unwatched(Some(0), 100, 0, u64::MAX), 1);
    }
}
