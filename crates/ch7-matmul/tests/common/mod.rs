//! Inputs and devices shared by the chapter's tests.

#![allow(dead_code)]

use proptest::prelude::*;

pub use harness::testing::test_device as device;

/// Matmul's work grows as M·N·K, so a failing case shrinks in fewer steps than elsewhere.
pub fn cases(
    is_cuda: bool,
    on_gpu: u32,
    on_emulator: u32,
    source_file: &'static str,
) -> ProptestConfig {
    ProptestConfig {
        max_shrink_iters: 32,
        ..harness::testing::proptest_config(is_cuda, on_gpu, on_emulator, source_file)
    }
}

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

pub fn fail(error: harness::HarnessError) -> TestCaseError {
    TestCaseError::fail(error.to_string())
}
