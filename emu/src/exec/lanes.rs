//! The lanes schedule's part inside a warp ([`Schedule::Lanes`]): lanes of one warp that run
//! apart, as independent thread scheduling lets them since Volta.
//!
//! The other schedules keep a converged warp together: an instruction runs for lanes 0 to 31
//! in order, and every lane finishes it before any lane starts the next. Racecheck orders
//! accesses by what the run did (an atomic acquires what earlier atomics on its word released;
//! a word keeps its last write), so that lockstep can order a pair that a GPU need not: lane
//! 31's atomic is always the last of its warp, and its own read after it looks ordered.
//!
//! Here, at a load, store or atomic of shared or global memory, a converged group of lanes may
//! split: a random part of it runs the access and goes on ahead ("favored", the same mark the
//! spin-lock escape of `warp.rs` uses), and the rest wait at the access. The group ahead keeps
//! the warp until, at one of its own later memory accesses, it hands the warp back; then the
//! lowest PC runs again (min-PC reconvergence), so the lanes behind catch up and the groups
//! merge where their PCs meet. Lanes still meet where CUDA makes them: warp-synchronous
//! instructions wait for their mask, barriers for the block.

use super::*;

/// A warp's splitter: its own seeded generator, so that what a warp does depends on the seed
/// and the warp only, not on how the other warps' turns went.
pub(crate) struct Interleave {
    rng: Rng,
}

impl Interleave {
    /// The splitter of warp `warp` of block `block` under `schedule`, or `None` when the
    /// schedule keeps warps together.
    pub(crate) fn for_warp(schedule: Schedule, block: u64, warp: u32) -> Option<Interleave> {
        let Schedule::Lanes { seed } = schedule else {
            return None;
        };
        let mut mix = Rng::seeded(seed ^ 0x1A9E_5EED);
        let start = mix.next() ^ block.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ (warp as u64) << 48;
        Some(Interleave {
            rng: Rng::seeded(start),
        })
    }

    /// True once in `n` times.
    fn one_in(&mut self, n: usize) -> bool {
        self.rng.below(n) == 0
    }

    /// A random lane of `lanes` (not empty).
    fn lane_of(&mut self, lanes: u32) -> u8 {
        let mut k = self.rng.below(lanes.count_ones() as usize);
        let mut rest = lanes;
        while k > 0 {
            rest &= rest - 1;
            k -= 1;
        }
        rest.trailing_zeros() as u8
    }
}

/// Whether `op` reads or writes memory other threads can see: shared or global (through a
/// generic address too), not a thread's own local memory or parameters.
fn shared_with_others(op: &Op) -> bool {
    let space = match op {
        Op::Ld { space, .. } | Op::St { space, .. } | Op::Atom { space, .. } => *space,
        _ => return false,
    };
    matches!(space, Space::Global | Space::Shared | Space::Generic)
}

/// Before warp `w` runs its next instruction: at a memory access, the group ahead may hand the
/// warp back, and a group of several lanes may split.
pub(crate) fn interleave(code: &[Instr], w: &mut Warp) {
    let Some(ins) = code.get(w.pc as usize) else {
        return;
    };
    if !shared_with_others(&ins.op) {
        return;
    }
    let Some(lanes) = w.lanes.as_mut() else {
        return;
    };
    let ahead = w.favored.is_some_and(|f| w.active & (1 << f) != 0);
    if ahead {
        // The group ahead reached another access: it goes on (mostly: a race needs it to get
        // past the access that would have ordered it), or the lanes behind get a turn.
        if lanes.one_in(4) {
            w.favored = None;
            w.regroup();
        }
        return;
    }
    if w.active.count_ones() < 2 || lanes.one_in(4) {
        return;
    }
    // A random part of the group runs ahead: always its highest lane and never its lowest, the
    // order lockstep never takes (it runs a group's lanes from the lowest up), and any of the
    // lanes between.
    let group = w.active;
    let highest = 1 << (31 - group.leading_zeros());
    let lowest = 1 << group.trailing_zeros();
    let part = ((lanes.rng.next() as u32 & group) | highest) & !lowest;
    // Any of its lanes leads it: where the group ahead diverges, the leader's side goes on.
    let leader = lanes.lane_of(part);
    w.flush();
    w.active = part;
    w.favored = Some(leader);
}
