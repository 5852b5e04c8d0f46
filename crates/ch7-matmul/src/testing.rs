//! Proptest strategies and seeded input generators for this chapter's kernels: its tests draw
//! their cases from them, and so does the exercise runner (`learn/`) when it checks a learner's
//! kernel. Behind the `testing` feature, so the walk-through does not build proptest.

use harness::Schedule;
use proptest::prelude::*;

/// One side of a matrix: 1, primes, multiples of the tile and their neighbours, and the rest.
pub fn side(largest: u32) -> BoxedStrategy<u32> {
    prop_oneof![
        2 => 1u32..=largest,
        1 => prop::sample::select(vec![1u32, 2, 15, 16, 17, 31, 32, 33, 37, 47, 48]),
    ]
    .prop_map(move |side| side.min(largest))
    .boxed()
}

/// 2D blocks of every legal shape, square or not, warp multiples or not.
pub fn block() -> impl Strategy<Value = (u32, u32)> {
    prop_oneof![
        2 => prop::sample::select(vec![(16u32, 16u32), (32, 8), (8, 32), (32, 32), (1, 1)]),
        1 => (1u32..=64, 1u32..=16),
    ]
}

/// The emulator's three schedules, seeded; a GPU ignores them.
pub fn schedule() -> impl Strategy<Value = Schedule> {
    prop_oneof![
        Just(Schedule::Hardware),
        any::<u64>().prop_map(|seed| Schedule::Random { seed }),
        any::<u64>().prop_map(|seed| Schedule::Adversarial { seed }),
        any::<u64>().prop_map(|seed| Schedule::Lanes { seed }),
    ]
}
