//! The schedules' seeded generator, and the lanes schedule's part inside a warp
//! (`Schedule::Lanes`): lanes of one warp that run apart, as independent thread scheduling lets
//! them since Volta. `Warp::interleave` (in `warp.rs`) applies what this decides.
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

use crate::ir::{Op, Space};

/// Deterministic PRNG (splitmix64): schedules must repeat for a seed, and need no dependency.
pub(crate) struct Rng(u64);

impl Rng {
    pub(crate) fn seeded(seed: u64) -> Rng {
        Rng(seed)
    }
    pub(crate) fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    pub(crate) fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// A warp's splitter: its own seeded generator, so that what a warp does depends on the seed
/// and the warp only, not on how the other warps' turns went.
pub(crate) struct Interleave {
    rng: Rng,
}

impl Interleave {
    /// The splitter of warp `warp` of block `block` under the lanes schedule of `seed`.
    pub(crate) fn for_warp(seed: u64, block: u64, warp: u32) -> Interleave {
        let mut mix = Rng::seeded(seed ^ 0x1A9E_5EED);
        let start = mix.next() ^ block.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ (warp as u64) << 48;
        Interleave {
            rng: Rng::seeded(start),
        }
    }

    /// True once in `n` times.
    fn one_in(&mut self, n: usize) -> bool {
        self.rng.below(n) == 0
    }

    /// The group ahead reached another memory access: whether it hands the warp back to the
    /// lanes behind (once in four; a race needs it to get past the access that would have
    /// ordered it, so mostly it goes on).
    pub(crate) fn hands_back(&mut self) -> bool {
        self.one_in(4)
    }

    /// At a memory access of `group` (converged lanes): the part that runs ahead and the lane
    /// that leads it, or `None` when the group keeps together (once in four, and always for a
    /// lone lane). The part always has the group's highest lane and never its lowest, the order
    /// lockstep never takes (it runs a group's lanes from the lowest up), and any of the lanes
    /// between; any of its lanes leads it (where the part diverges, the leader's side goes on).
    pub(crate) fn split(&mut self, group: u32) -> Option<(u32, u8)> {
        if group.count_ones() < 2 || self.one_in(4) {
            return None;
        }
        let highest = 1 << (31 - group.leading_zeros());
        let lowest = 1 << group.trailing_zeros();
        let part = ((self.rng.next() as u32 & group) | highest) & !lowest;
        let mut k = self.rng.below(part.count_ones() as usize);
        let mut rest = part;
        while k > 0 {
            rest &= rest - 1;
            k -= 1;
        }
        Some((part, rest.trailing_zeros() as u8))
    }
}

/// Whether `op` reads or writes memory other threads can see: shared or global (through a
/// generic address too), not a thread's own local memory or parameters.
pub(crate) fn shared_with_others(op: &Op) -> bool {
    let space = match op {
        Op::Ld { space, .. } | Op::St { space, .. } | Op::Atom { space, .. } => *space,
        _ => return false,
    };
    matches!(space, Space::Global | Space::Shared | Space::Generic)
}
