//! Inputs, launch shapes and devices shared by the chapter's tests; the strategies live in the
//! library's `testing` module, which the exercise runner shares.

#![allow(unused_imports)]

pub use ch4_atomics::testing::*;
pub use harness::testing::{proptest_config as cases, test_device as device};
