//! Proptest strategies and seeded input generators for this chapter's kernels: its tests draw
//! their cases from them, and so does the exercise runner (`learn/`) when it checks a learner's
//! kernel. Behind the `testing` feature, so the walk-through does not build proptest.

use crate::Board;
use harness::Schedule;
use proptest::prelude::*;

/// A board side: 1 and 2 (where neighbours wrap onto the same cells), small sides, sides
/// around a block or tile edge, primes, and up to `largest`.
pub fn side(largest: u32) -> impl Strategy<Value = u32> {
    prop_oneof![
        2 => 1u32..=4,
        3 => 5u32..=40,
        2 => prop::sample::select(vec![15u32, 16, 17, 23, 24, 25, 31, 32, 33, 47, 48, 97]),
        1 => 41u32..=largest.max(41),
    ]
}

/// Share of cells alive: empty and full boards too.
pub fn density() -> impl Strategy<Value = f64> {
    prop_oneof![
        1 => Just(0.0),
        1 => Just(1.0),
        4 => 0.05f64..0.95,
    ]
}

pub fn board(width: u32, height: u32, density: f64, seed: u64) -> Board {
    match Board::random(width, height, density, seed) {
        Ok(board) => board,
        Err(error) => panic!("a generated board is out of range: {error}"),
    }
}

/// A 2D block of at most 1024 threads, warp-sized or not.
pub fn block() -> impl Strategy<Value = (u32, u32)> {
    prop_oneof![
        2 => prop::sample::select(vec![(16u32, 16u32), (32, 8), (32, 32), (8, 32), (1, 1), (64, 2)]),
        3 => (1u32..=64).prop_flat_map(|x| (Just(x), 1u32..=(1024 / x).min(64))),
    ]
}

/// Emulator schedules: a fixed kernel must be right under every one of them.
pub fn schedule() -> impl Strategy<Value = Schedule> {
    prop_oneof![
        Just(Schedule::Hardware),
        any::<u64>().prop_map(|seed| Schedule::Random { seed }),
        any::<u64>().prop_map(|seed| Schedule::Adversarial { seed }),
        any::<u64>().prop_map(|seed| Schedule::Lanes { seed }),
    ]
}
