//! Proptest strategies and seeded input generators for this chapter's kernels: its tests draw
//! their cases from them, and so does the exercise runner (`learn/`) when it checks a learner's
//! kernel. Behind the `testing` feature, so the walk-through does not build proptest.

use harness::Schedule;
use harness::rand::Rng;
use proptest::prelude::*;

/// Lengths from 1 to `largest`: 1 and 2, primes, powers of two and their neighbours, and
/// anything in between.
pub fn length(largest: usize) -> BoxedStrategy<usize> {
    let mut special: Vec<usize> = vec![
        1, 2, 3, 5, 7, 13, 31, 97, 257, 1_009, 4_099, 65_537, 100_003,
    ];
    for power in 1..=27 {
        let p = 1usize << power;
        special.extend([p - 1, p, p + 1]);
    }
    special.retain(|&n| n >= 1 && n <= largest);
    special.sort_unstable();
    special.dedup();
    prop_oneof![
        3 => prop::sample::select(special),
        2 => 1usize..=64.min(largest),
        2 => 1usize..=largest,
    ]
    .boxed()
}

/// How generated values are spread: small ones a person can check, or any `u32`, whose sums
/// wrap exactly as the kernels' `unsigned int` additions do.
#[derive(Debug, Clone, Copy)]
pub enum Values {
    Small,
    AnyU32,
    Zeros,
}

pub fn values_kind() -> impl Strategy<Value = Values> {
    prop_oneof![
        3 => Just(Values::Small),
        2 => Just(Values::AnyU32),
        1 => Just(Values::Zeros),
    ]
}

/// Values built from a seed rather than element by element, so large inputs cost nothing to
/// generate or shrink, and any failure repeats from its printed seed.
pub fn values(len: usize, kind: Values, seed: u64) -> Vec<u32> {
    let mut rng = harness::cli::seeded_rng(seed);
    (0..len)
        .map(|_| match kind {
            Values::Small => rng.random_range(0..10),
            Values::AnyU32 => rng.random(),
            Values::Zeros => 0,
        })
        .collect()
}

/// Floats in `[-scale, scale)`.
pub fn floats(len: usize, scale: f32, seed: u64) -> Vec<f32> {
    let mut rng = harness::cli::seeded_rng(seed);
    (0..len).map(|_| rng.random_range(-scale..scale)).collect()
}

/// `(n, threads)` for a one-block scan: from the fewest threads it needs to a full block.
pub fn one_block_case(limit: usize, exclusive: bool) -> impl Strategy<Value = (usize, u32)> {
    length(limit).prop_flat_map(move |n| {
        let needed = if exclusive {
            crate::padded_len(n) / 2
        } else {
            n
        };
        (Just(n), (needed.max(1) as u32)..=1024)
    })
}

/// Blocks of the large-array scan: a power of two from a warp to the largest block.
pub fn tile_threads() -> impl Strategy<Value = u32> {
    prop::sample::select(vec![32u32, 64, 128, 256, 512, 1024])
}

/// Blocks of the climb's tile scans: whole warps, 32 to 512 threads.
pub fn climb_threads() -> impl Strategy<Value = u32> {
    climb_threads_up_to(crate::MAX_TILE_THREADS)
}

/// Blocks of whole warps, 32 to `most` threads.
pub fn climb_threads_up_to(most: u32) -> impl Strategy<Value = u32> {
    (1u32..=(most / 32).max(1)).prop_map(|warps| 32 * warps)
}

/// The emulator's three schedules, with any seed.
pub fn schedule() -> impl Strategy<Value = Schedule> {
    prop_oneof![
        Just(Schedule::Hardware),
        any::<u64>().prop_map(|seed| Schedule::Random { seed }),
        any::<u64>().prop_map(|seed| Schedule::Adversarial { seed }),
        any::<u64>().prop_map(|seed| Schedule::Lanes { seed }),
    ]
}
