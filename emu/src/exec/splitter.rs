//! The seeded generator every random schedule draws from, and a warp's splitter under the
//! `Lanes` schedule (see `lanes.rs`).

use crate::options::Schedule;

/// Deterministic PRNG (splitmix64): schedules must repeat for a seed, and need no dependency.
pub(crate) struct Rng(pub(crate) u64);

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
    pub(crate) rng: Rng,
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
    pub(crate) fn one_in(&mut self, n: usize) -> bool {
        self.rng.below(n) == 0
    }

    /// A random lane of `lanes` (not empty).
    pub(crate) fn lane_of(&mut self, lanes: u32) -> u8 {
        let mut k = self.rng.below(lanes.count_ones() as usize);
        let mut rest = lanes;
        while k > 0 {
            rest &= rest - 1;
            k -= 1;
        }
        rest.trailing_zeros() as u8
    }
}
