//! Proptest strategies for this chapter's tests, shared with the exercise runner (`learn/`),
//! which checks a learner's kernel with them. Behind the `testing` feature, so the walk-through
//! does not build proptest.

use harness::Schedule;
use proptest::prelude::*;

use crate::MAX_EMULATED_DEVICES;

/// Values per device: from 0 and 1 through primes and non-multiples of every ring size.
pub fn length() -> impl Strategy<Value = usize> {
    prop_oneof![
        3 => 0usize..=64,
        3 => 65usize..=3_000,
        2 => prop::sample::select(vec![97usize, 257, 1_009, 4_099, 10_007]),
    ]
}

/// Ring sizes on the emulator: 2 to 8 devices, 2 most often.
pub fn devices() -> impl Strategy<Value = usize> {
    prop_oneof![
        3 => Just(2usize),
        2 => 3usize..=4,
        1 => 5usize..=MAX_EMULATED_DEVICES,
    ]
}

/// Blocks per launch on each device.
pub fn blocks() -> impl Strategy<Value = u32> {
    1u32..=12
}

/// The reduction kernels' blocks: every power of two up to 1024 threads.
pub fn power_of_two_threads() -> impl Strategy<Value = u32> {
    (0..=10u32).prop_map(|power| 1u32 << power)
}

/// Any block size, for the ring's element-wise steps.
pub fn any_threads() -> impl Strategy<Value = u32> {
    prop_oneof![
        2 => prop::sample::select(vec![1u32, 32, 64, 256, 1024]),
        1 => 1u32..=1024,
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
