//! Inputs and devices shared by the chapter's tests; the strategies live in the library's
//! `testing` module, which the exercise runner shares.

#![allow(dead_code)]

use proptest::prelude::*;

pub use ch7_matmul::testing::*;
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

pub fn fail(error: harness::HarnessError) -> TestCaseError {
    TestCaseError::fail(error.to_string())
}
