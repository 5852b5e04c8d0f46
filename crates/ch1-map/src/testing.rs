//! Proptest strategies and seeded input generators for this chapter's kernels: its tests draw
//! their cases from them, and so does the exercise runner (`learn/`) when it checks a learner's
//! kernel. Behind the `testing` feature, so the walk-through does not build proptest.

use crate::Data;
use harness::Schedule;
use proptest::prelude::*;

/// Lengths from 0 and 1 through primes and non-multiples of any block up to `largest`.
pub fn length(largest: usize) -> impl Strategy<Value = usize> {
    prop_oneof![
        3 => 0usize..=64,
        3 => 65usize..=5_000,
        2 => prop::sample::select(vec![97usize, 257, 1_009, 4_099, 65_537, 100_003]),
        1 => 5_001usize..=largest.max(5_001),
    ]
}

/// The largest arrays a test generates on each backend.
pub fn largest(is_cuda: bool) -> usize {
    if is_cuda { 4_000_000 } else { 150_000 }
}

/// Threads per block: every legal size, including ones that are not multiples of a warp.
pub fn threads_per_block() -> impl Strategy<Value = u32> {
    prop_oneof![
        2 => prop::sample::select(vec![32u32, 64, 128, 256, 512, 1024]),
        1 => 1u32..=1024,
    ]
}

/// Blocks for a grid-stride launch, which need not cover the array.
pub fn blocks(is_cuda: bool) -> BoxedStrategy<u32> {
    if is_cuda {
        (1u32..=4096).boxed()
    } else {
        (1u32..=48).boxed()
    }
}

pub fn data() -> impl Strategy<Value = Data> {
    prop_oneof![
        Just(Data::Unit),
        Just(Data::Wide),
        Just(Data::AnyBits),
        Just(Data::Mixed),
    ]
}

/// A 2D block of at most 1024 threads, any sides.
pub fn block_2d() -> impl Strategy<Value = (u32, u32)> {
    (1u32..=1024)
        .prop_flat_map(|x| (Just(x), 1u32..=(1024 / x).min(64)))
        .prop_map(|(x, y)| (x, y))
}

/// Matrix sides: single rows and columns, non-multiples of any block.
pub fn side() -> impl Strategy<Value = usize> {
    prop_oneof![2 => 1usize..=40, 1 => 41usize..=400]
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
