//! The binary as a user meets it: bad flags and missing hardware give one line and a non-zero
//! exit, never a panic.

use std::process::Output;

use harness::testing::{
    assert_bad_common_flags_refused, assert_cuda_without_a_driver_is_one_sentence,
    assert_list_names_every_variant, assert_one_line_error, auto_falls_back_to_the_emulator,
    run_binary,
};

const BINARY: &str = env!("CARGO_BIN_EXE_ch4-atomics");

fn ch4(args: &[&str]) -> Output {
    run_binary(BINARY, args)
}

#[test]
fn bad_flags_are_refused_in_one_line() {
    assert_bad_common_flags_refused(BINARY, ch4_atomics::VARIANTS);
    assert_one_line_error(
        &ch4(&["--size", "0"]),
        "--size 0 is outside 1..=4294967295 bytes",
    );
    assert_one_line_error(
        &ch4(&["--backend", "emu", "--text", "/nonexistent/book.txt"]),
        "cannot read --text /nonexistent/book.txt",
    );
}

#[test]
fn cuda_without_a_driver_says_so_in_one_sentence() {
    assert_cuda_without_a_driver_is_one_sentence(BINARY, "atomic-increment");
}

#[test]
fn auto_without_a_gpu_falls_back_to_the_emulator_and_says_so_first() {
    let Some(stdout) = auto_falls_back_to_the_emulator(BINARY, &["--variant", "atomic-increment"])
    else {
        return;
    };
    assert!(
        stdout.contains("x[0] after 5 launches: 160, 160, 160, 160, 160"),
        "{stdout}"
    );
}

#[test]
fn list_names_every_variant() {
    assert_list_names_every_variant(BINARY, ch4_atomics::VARIANTS);
}
