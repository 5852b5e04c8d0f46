//! Proptest strategies and seeded input generators for this chapter's kernels: its tests draw
//! their cases from them, and so does the exercise runner (`learn/`) when it checks a learner's
//! kernel. Behind the `testing` feature, so the walk-through does not build proptest.

use crate::{Data, MAX_DOT_THREADS};
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

pub fn data() -> impl Strategy<Value = Data> {
    prop_oneof![
        Just(Data::Positive),
        Just(Data::Signed),
        Just(Data::WideRange)
    ]
}

/// The dot kernels' blocks: every power of two up to 1024 threads.
pub fn power_of_two_threads() -> impl Strategy<Value = u32> {
    (0..=MAX_DOT_THREADS.trailing_zeros()).prop_map(|power| 1u32 << power)
}

/// Threads per block for the lock kernels, where only thread 0 takes the lock: any size.
pub fn any_threads() -> impl Strategy<Value = u32> {
    prop_oneof![
        2 => prop::sample::select(vec![1u32, 32, 64, 256, 1024]),
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

/// The emulator's three schedules, seeded; a GPU ignores them.
pub fn schedule() -> impl Strategy<Value = Schedule> {
    prop_oneof![
        Just(Schedule::Hardware),
        any::<u64>().prop_map(|seed| Schedule::Random { seed }),
        any::<u64>().prop_map(|seed| Schedule::Adversarial { seed }),
        any::<u64>().prop_map(|seed| Schedule::Lanes { seed }),
    ]
}
