//! A turn's blocks, shared by the shares that run them: who runs which block now, how far each
//! got, and the horizons before which the blocks may load global memory.

use std::sync::atomic::{AtomicBool, AtomicU8, AtomicU32, AtomicU64, AtomicUsize, Ordering};

use crate::exec::plan;
use crate::exec::plan::{Lead, Turn};
use crate::exec::views::RawSlice;
use crate::exec::warp::{BlockState, Warp};

/// A value on cache lines of its own: what many threads spin on must not share a line with
/// what they write, or every write sends the line to every spinner.
#[repr(align(128))]
#[derive(Default)]
pub(super) struct OwnLine<T>(pub(super) T);

impl<T> std::ops::Deref for OwnLine<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.0
    }
}

/// A resident block as a worker gets it for a turn.
#[derive(Clone, Copy)]
pub(super) struct Resident {
    pub(super) slot: u32,
    pub(super) warps: RawSlice<Warp>,
    pub(super) state: RawSlice<BlockState>,
    /// The block to prepare the slot for before its first round, when it was just claimed.
    pub(super) fresh: Option<u64>,
}
/// A block and its turn as it runs, segment by segment. A block that ran ahead of the launch's
/// rounds starts its turn with those rounds; its `ahead` is `None` until a share stops it for
/// the turn (the launch looks itself at a block whose `ahead` is unknown).
pub(super) struct Running {
    pub(super) block: Resident,
    pub(super) turn: Turn,
    /// The rounds the block ran past the turn's end, once the turn settled.
    pub(super) lead: Lead,
}

/// A turn's blocks in slot order, each share a run of them. Each block goes as far as it may on
/// its own (see [`run_share`](super::share::run_share)); any share may run a block's next segment, so that a share on a
/// slower core (cloud machines lend cores that run at different speeds) leaves its last blocks
/// to the others instead of making the whole turn wait.
pub(super) struct Board {
    pub(super) blocks: Vec<OwnLine<OnBoard>>,
    /// Rounds every block may run whatever they do (the launch looked at them), and the most
    /// any block runs.
    pub(super) planned: u32,
    pub(super) most: u32,
    /// Bumped whenever a share puts back a block that changed: shares with nothing to run wait
    /// for it, or for the nearest horizon to move.
    pub(super) changes: OwnLine<AtomicU64>,
    /// Blocks being run now.
    pub(super) running: OwnLine<AtomicUsize>,
    /// Whether the blocks may meet on a round once they all stopped: [`OPEN`], [`DECIDING`]
    /// while a share decides it, [`OVER`] once one found they may not (see [`Board::settle`]).
    pub(super) meeting: OwnLine<AtomicU8>,
}

/// States of [`Board::meeting`].
pub(super) const OPEN: u8 = 0;
pub(super) const DECIDING: u8 = 1;
pub(super) const OVER: u8 = 2;

/// What a share that found its turn settled learns of it.
pub(super) enum Settled {
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
pub(super) const SEGMENT_ROUNDS: u32 = 16;

/// The rounds of a block still to be counted (see [`run_block`](super::share::run_block)).
pub(super) const NOT_COUNTED: u32 = u32::MAX;

/// A block of the board: whether a share runs it now, how far it got, and its turn so far.
pub(super) struct OnBoard {
    pub(super) taken: AtomicBool,
    /// The round it reached, from the turn's start.
    pub(super) reached: AtomicU32,
    /// The round before which it surely changes nothing beyond itself: once every block's
    /// horizon is past a round, no one writes global memory before it, and every block may
    /// load global memory until then.
    pub(super) horizon: AtomicU32,
    /// Rounds from `reached` it surely keeps to itself, global loads excluded, which it may run
    /// past the others' horizons ([`NOT_COUNTED`] before it was looked at).
    pub(super) keeps_to_itself: AtomicU32,
    /// On lines of its own: the share running the block writes it every round, while the
    /// others read the atomics above.
    pub(super) running: OwnLine<std::cell::UnsafeCell<Running>>,
}

impl OnBoard {
    /// The block reached round `reached`, and stays quiet `quiet` rounds from there.
    pub(super) fn publish(&self, board: &Board, reached: u32, quiet: u32) {
        self.reached.store(reached, Ordering::Release);
        self.horizon
            .fetch_max(board.planned.max(reached + quiet), Ordering::AcqRel);
    }
}

// SAFETY: a block's `running` is touched only by the share that took it (`taken`), and takes
// follow each other through `taken`'s release and acquire (see `run_share`).
unsafe impl Sync for OnBoard {}

impl Board {
    pub(super) fn new(blocks: impl Iterator<Item = Running>, planned: u32, most: u32) -> Board {
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
    pub(super) unsafe fn settle(&self, seen: u64, failed: &AtomicBool) -> Settled {
        let deciding = || {
            let meeting = &self.meeting;
            meeting.compare_exchange(OPEN, DECIDING, Ordering::SeqCst, Ordering::SeqCst)
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
                    // In one order with the shares' takes (see `Board::over`).
                    self.meeting.store(OVER, Ordering::SeqCst);
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
    pub(super) fn bound(&self) -> u32 {
        let nearest = self
            .blocks
            .iter()
            .map(|b| b.horizon.load(Ordering::Acquire));
        nearest.min().unwrap_or(0).min(self.most)
    }

    /// Whether block `index` has rounds to run, as far as its share can tell with `bound`.
    pub(super) fn runnable(&self, index: usize, bound: u32) -> bool {
        self.runnable_alone(&self.blocks[index], bound)
    }

    /// [`Board::runnable`], for a block the caller holds.
    pub(super) fn runnable_alone(&self, block: &OnBoard, bound: u32) -> bool {
        let reached = block.reached.load(Ordering::Acquire);
        reached < self.most
            && (reached < bound || block.keeps_to_itself.load(Ordering::Acquire) > 0)
    }

    /// Whether a share decided the turn is over: a block taken after that is put back unrun.
    /// A share checks it after its take counted in `running`, and every share waits for
    /// `running` to fall to 0 before it ends its blocks' turns ([`Board::wait_for_takes`]): so
    /// either the take comes after the decision and sees it, or the turns end after the run.
    pub(super) fn over(&self) -> bool {
        self.meeting.load(Ordering::SeqCst) == OVER
    }

    /// Waits until no share holds a block: takes made before the turn was decided over may
    /// still be running one.
    pub(super) fn wait_for_takes(&self, failed: &AtomicBool) {
        while self.running.load(Ordering::SeqCst) != 0 && !failed.load(Ordering::Acquire) {
            std::hint::spin_loop();
        }
    }

    /// Takes block `index` for the caller: true when no share had it.
    pub(super) fn take(&self, index: usize) -> bool {
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
    pub(super) fn put_back(&self, index: usize, changed: bool) {
        if changed {
            self.changes.fetch_add(1, Ordering::SeqCst);
        }
        self.blocks[index].taken.store(false, Ordering::Release);
        self.running.fetch_sub(1, Ordering::SeqCst);
    }

    /// The order a share looks at the blocks in: its own share first, then, to take over
    /// others' blocks, backwards from the block before its share (the others work forwards
    /// through theirs, so they meet late).
    pub(super) fn order(
        &self,
        share: &std::ops::Range<usize>,
    ) -> impl Iterator<Item = usize> + use<> {
        let count = self.blocks.len();
        let start = share.start;
        let own = share.clone();
        let others = (1..=count)
            .map(move |back| (start + count - back) % count)
            .filter(move |index| !own.contains(index));
        share.clone().chain(others)
    }
}
