//! The binary as a user meets it: bad flags and missing hardware give one line and a non-zero
//! exit, never a panic.

use harness::testing::{
    assert_bad_common_flags_refused, assert_cuda_without_a_driver_is_one_sentence,
    assert_list_names_every_variant, assert_one_line_error, run_binary,
};

const BINARY: &str = env!("CARGO_BIN_EXE_ch6-scans");

#[test]
fn bad_flags_are_refused_in_one_line() {
    assert_bad_common_flags_refused(BINARY, ch6_scans::VARIANTS);
    assert_one_line_error(
        &run_binary(BINARY, &["--size", "0"]),
        "--size 0 is outside 1..=1073741824 elements",
    );
}

#[test]
fn cuda_without_a_driver_says_so_in_one_sentence() {
    assert_cuda_without_a_driver_is_one_sentence(BINARY, "hillis-steele-double-buffer");
}

#[test]
fn list_names_every_variant() {
    assert_list_names_every_variant(BINARY, ch6_scans::VARIANTS);
}
