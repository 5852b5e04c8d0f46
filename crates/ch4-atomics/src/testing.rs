//! Proptest strategies and seeded input generators for this chapter's kernels: its tests draw
//! their cases from them, and so does the exercise runner (`learn/`) when it checks a learner's
//! kernel. Behind the `testing` feature, so the walk-through does not build proptest.

use harness::Schedule;
use harness::rand::Rng;
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

/// How the bytes of a generated text are distributed: the skew decides how often threads
/// collide on one bin.
#[derive(Debug, Clone, Copy)]
pub enum Alphabet {
    /// any byte, so about half are >= 128 and must be skipped
    AnyByte,
    /// letters, digits, space and punctuation
    Printable,
    /// one character only: every thread fights over the same bin
    OneLetter,
}

pub fn alphabet() -> impl Strategy<Value = Alphabet> {
    prop_oneof![
        Just(Alphabet::AnyByte),
        Just(Alphabet::Printable),
        Just(Alphabet::OneLetter)
    ]
}

/// A text built from a seed rather than element by element, so millions of bytes cost nothing
/// to generate or shrink, and any failure repeats from its printed seed.
pub fn text(len: usize, alphabet: Alphabet, seed: u64) -> Vec<u8> {
    let mut rng = harness::cli::seeded_rng(seed);
    (0..len)
        .map(|_| match alphabet {
            Alphabet::AnyByte => rng.random::<u8>(),
            Alphabet::Printable => rng.random_range(b' '..=b'~'),
            Alphabet::OneLetter => b'e',
        })
        .collect()
}

/// Threads per block: every legal size, including ones that are not multiples of a warp.
pub fn threads_per_block() -> impl Strategy<Value = u32> {
    prop_oneof![
        2 => prop::sample::select(vec![32u32, 64, 128, 256, 512, 1024]),
        1 => 1u32..=1024,
    ]
}

pub fn blocks(is_cuda: bool) -> BoxedStrategy<u32> {
    if is_cuda {
        (1u32..=2048).boxed()
    } else {
        (1u32..=48).boxed()
    }
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
