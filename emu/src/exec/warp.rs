//! A warp's state: lanes, program counters, divergence and reconvergence, per-block barrier
//! state, and the frames saved by calls into recursive functions.

use super::limits::SPIN_LIMIT;

#[derive(Clone, Default)]
pub(crate) struct Bar {
    pub(crate) arrived: u32,
    pub(crate) expected: Option<u32>,
    /// (PC, threads arrived there, global id of the first).
    pub(crate) sites: Vec<(u32, u32, u64)>,
    pub(crate) red: u32,
    /// Some arrival is a `bar.red` whose result goes to a register.
    pub(crate) red_dest: bool,
}

/// A resident block's barrier state (one per slot).
#[derive(Default)]
// Neighbouring slots' states are written by different cores (see `Warp`).
#[repr(align(64))]
pub(crate) struct BlockState {
    pub(crate) live: u32,
    /// The block's warps that have live lanes, bit `wi` for warp `wi`: a round steps only
    /// these. In a block whose other threads return at once while one thread loops, stepping
    /// every exited warp each round was most of the launch (see BENCHMARK.md).
    pub(crate) live_warps: u64,
    pub(crate) exited: u32,
    /// Global thread id and PC of the first thread that exited.
    pub(crate) first_exit: Option<(u64, u32)>,
    /// The PC of the last branch over a barrier that the first thread to exit took after its
    /// last barrier (`Warp::barrier_skip`): a `break`, `continue` or `if` it left by.
    pub(crate) first_exit_skipped: Option<u32>,
    /// Global thread id of the first thread to take a branch over a barrier straight to its
    /// end, and the branch's PC: where such a thread returned.
    pub(crate) exit_branch: Option<(u64, u32)>,
    pub(crate) bars: Vec<Bar>,
    /// Rounds the block has taken since it started, for [`RoundTag`]s.
    pub(crate) rounds: u64,
    /// Barriers it completed since it started.
    pub(crate) barriers: u32,
    /// Its `cp.async` copies in flight under racecheck, while another block takes its round
    /// on the same core: they go with the block from core to core (see [`Ctx::copies_in_flight`]).
    pub(crate) copies_in_flight: Vec<CopyInFlight>,
}

/// A `cp.async` into shared memory between its issue and the wait that lands it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct CopyInFlight {
    pub(crate) slot: u32,
    pub(crate) offset: usize,
    pub(crate) size: u32,
    /// The issuing thread's global id.
    pub(crate) tid: u64,
    pub(crate) pc: u32,
}

/// A block's round that made race-detector calls, as they wait to join the launch's: the
/// launch checks that each block's join in the order it ran them, as one core would have.
#[derive(Clone, Copy, Debug)]
pub(crate) struct RoundTag {
    pub(crate) slot: u32,
    pub(crate) block: u64,
    pub(crate) round: u64,
    /// The ways its calls went on their way to the launch's detector ([`RoundTag::TAKEN`] …),
    /// which a report of calls out of order names.
    pub(crate) path: u16,
}

impl RoundTag {
    /// Records this round as its slot's latest in `latest`, and returns the round it replaced
    /// when that was of the same block and not earlier: calls out of the block's order.
    pub(crate) fn came_after(self, latest: &mut Vec<Option<RoundTag>>) -> Option<RoundTag> {
        let slot = self.slot as usize;
        if latest.len() <= slot {
            latest.resize(slot + 1, None);
        }
        let before = latest[slot].replace(self);
        before.filter(|last| last.block == self.block && last.round >= self.round)
    }

    /// Taken out of a worker's context, or the launch's set aside, after the round.
    pub(crate) const TAKEN: u16 = 1;
    /// Run on the launch's core while others' outcomes waited in line.
    pub(crate) const IN_LINE: u16 = 1 << 1;
    /// Past the turn's end, in the block's lead.
    pub(crate) const AHEAD: u16 = 1 << 2;
    /// Taken from the lead by a round on one core.
    pub(crate) const TAKEN_ALONE: u16 = 1 << 3;
    /// Carried from the lead into the block's next turn.
    pub(crate) const INTO_NEXT_TURN: u16 = 1 << 4;
    /// Joined from a turn's line, one core's order.
    pub(crate) const FROM_TURN: u16 = 1 << 5;
    /// Joined from the line as one outcome.
    pub(crate) const FROM_LINE: u16 = 1 << 6;
    /// Joined at once, with nothing waiting in line before it.
    pub(crate) const AT_ONCE: u16 = 1 << 7;
    /// Made by a round on the launch's core straight into the detector's pipe.
    pub(crate) const STRAIGHT: u16 = 1 << 8;

    /// `tags`, each with `step` added to its path.
    pub(crate) fn marked(mut tags: Vec<RoundTag>, step: u16) -> Vec<RoundTag> {
        for tag in &mut tags {
            tag.path |= step;
        }
        tags
    }

    /// The path as words: `taken, ahead, into the next turn, from a turn's line`.
    pub(crate) fn path_words(path: u16) -> String {
        const WORDS: [&str; 9] = [
            "taken",
            "in line",
            "ahead",
            "taken alone",
            "into the next turn",
            "from a turn's line",
            "from the line",
            "at once",
            "straight",
        ];
        let words: Vec<&str> = (0..WORDS.len())
            .filter(|bit| path & (1 << bit) != 0)
            .map(|bit| WORDS[bit])
            .collect();
        if words.is_empty() {
            "no path".into()
        } else {
            words.join(", ")
        }
    }
}

#[derive(Default)]
// A cache line of its own: neighbouring slots' warps run on different cores, and a warp's
// fields change every instruction.
#[repr(align(64))]
pub(crate) struct Warp {
    /// Global linear block index.
    pub(crate) block: u64,
    /// Resident slot of the block.
    pub(crate) slot: u32,
    /// Thread index (linear, within the block) of lane 0.
    pub(crate) first: u32,
    /// Resident warp index: `slot * warps_per_block + warp`.
    pub(crate) gw: u32,
    /// PC of the lanes in `active`. Other lanes' PCs are in `lane_pc`.
    pub(crate) pc: u32,
    pub(crate) active: u32,
    pub(crate) live: u32,
    pub(crate) blocked: u32,
    /// Blocked lanes that wait in a warp-collective op (shfl/vote/bar.warp) rather than a barrier.
    pub(crate) wsync_wait: u32,
    /// The mask each waiting lane passed to its warp-collective op.
    pub(crate) wsync_mask: [u32; 32],
    pub(crate) lane_pc: [u32; 32],
    /// Per lane: one past the PC of the last branch forward over a barrier the lane took since
    /// it last arrived at a barrier (0: none), which a barrier divergence blames when the lane
    /// exits without arriving.
    pub(crate) barrier_skip: [u32; 32],
    pub(crate) bar_id: [u8; 32],
    /// One row of 32 lanes per register: `regs[r][lane]`.
    pub(crate) regs: Vec<[u64; 32]>,
    pub(crate) tparam: Vec<u8>,
    pub(crate) stacks: Vec<Vec<u32>>,
    /// Per lane, the saved state of each active call into a recursive function.
    pub(crate) frames: Vec<Vec<Frame>>,
    pub(crate) spin: u32,
    pub(crate) favored: Option<u8>,
    /// Under [`Schedule::Lanes`], what splits this warp's lanes apart (see `lanes.rs`).
    pub(crate) lanes: Option<super::splitter::Interleave>,
    /// Its lanes' `cp.async` copies that have not landed yet.
    pub(crate) async_copies: Vec<AsyncCopy>,
    /// Per lane, the `cp.async` groups it committed.
    pub(crate) copy_groups: [u32; 32],
    /// Steps of a compiled region whose registers are already written: each later step of the
    /// warp pays one (see `compiled/mod.rs`).
    pub(crate) compiled_debt: u32,
}

/// A `cp.async` issued and not landed yet (see `instr/asynchronous.rs`).
#[derive(Clone)]
pub(crate) struct AsyncCopy {
    pub(crate) lane: u8,
    /// The thread's group it belongs to: its count of committed groups when it was issued.
    pub(crate) group: u32,
    /// The destination's offset in the block's shared memory (`None`: out of bounds, reported
    /// when it was issued).
    pub(crate) dst: Option<usize>,
    pub(crate) bytes: [u8; 16],
    pub(crate) size: u8,
    /// The `cp.async`, which a race on the destination names.
    pub(crate) pc: u32,
}

/// What a call into a recursive function saves for one lane: the callee's registers, `.param`
/// bytes and local memory, which the callee's own activation is about to overwrite.
pub(crate) struct Frame {
    pub(crate) regs: Vec<u64>,
    pub(crate) tparam: Vec<u8>,
    pub(crate) local: Vec<u8>,
}

impl Warp {
    pub(crate) fn flush(&mut self) {
        lanes!(self.active, l, {
            self.lane_pc[l] = self.pc;
        });
    }

    /// Picks the lanes to run next: those at the lowest PC (reconvergence at join points), or the
    /// favored lane's group while a spinning group yields.
    pub(crate) fn regroup(&mut self) {
        self.flush();
        let runnable = self.live & !self.blocked;
        if runnable == 0 {
            self.active = 0;
            self.favored = None;
            return;
        }
        let pc = match self.favored {
            Some(f) if runnable & (1 << f) != 0 => self.lane_pc[f as usize],
            _ => {
                self.favored = None;
                let mut best = u32::MAX;
                lanes!(runnable, l, {
                    best = best.min(self.lane_pc[l]);
                });
                best
            }
        };
        let mut act = 0u32;
        lanes!(runnable, l, {
            if self.lane_pc[l] == pc {
                act |= 1 << l;
            }
        });
        self.pc = pc;
        self.active = act;
        if act == runnable {
            self.spin = 0;
            self.favored = None;
        }
    }

    #[inline]
    pub(crate) fn runnable(&self) -> u32 {
        self.live & !self.blocked
    }

    #[inline]
    pub(crate) fn advance(&mut self) {
        self.pc += 1;
        if self.active != self.runnable() {
            self.regroup();
        }
    }
}

pub(crate) fn recompute_exec(w: &Warp, guard: Option<(u32, bool)>) -> u32 {
    guarded(w, guard, w.active)
}

/// The lanes of `lanes` whose guard predicate lets them run.
pub(crate) fn guarded(w: &Warp, guard: Option<(u32, bool)>, lanes: u32) -> u32 {
    match guard {
        None => lanes,
        Some((p, neg)) => {
            let mut e = 0u32;
            lanes!(lanes, l, {
                if (w.regs[p as usize][l] & 1 != 0) != neg {
                    e |= 1 << l;
                }
            });
            e
        }
    }
}

pub(crate) fn set_lane_pcs(w: &mut Warp, exec: u32, target: u32, fallthrough: u32) {
    if exec == w.active {
        w.pc = target;
        if w.active != w.runnable() {
            w.regroup();
        }
        return;
    }
    w.flush();
    lanes!(w.active, l, {
        w.lane_pc[l] = if exec & (1 << l) != 0 {
            target
        } else {
            fallthrough
        };
    });
    w.active = 0;
    w.regroup();
}

/// Independent thread scheduling: a diverged group that keeps looping while other lanes wait
/// eventually lets one of them run (otherwise a lane spinning on a lock held by a lane of the
/// same warp would livelock, as it did before Volta).
pub(crate) fn backward_branch(w: &mut Warp) {
    let runnable = w.runnable();
    if let Some(f) = w.favored
        && w.active & (1 << f) != 0
    {
        w.favored = None;
        w.spin = 0;
        return;
    }
    if w.active == runnable {
        return;
    }
    w.spin += 1;
    if w.spin >= SPIN_LIMIT {
        w.spin = 0;
        let others = runnable & !w.active;
        let mut best: Option<(u32, u8)> = None;
        lanes!(others, l, {
            let p = w.lane_pc[l];
            if best.is_none_or(|b| p < b.0) {
                best = Some((p, l as u8));
            }
        });
        w.favored = best.map(|b| b.1);
    }
}
