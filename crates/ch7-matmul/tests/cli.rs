//! The binary as a user meets it: bad flags and missing hardware give one line and a non-zero
//! exit, never a panic.

use std::process::Output;

use harness::testing::{
    assert_bad_common_flags_refused, assert_cuda_without_a_driver_is_one_sentence,
    assert_list_names_every_variant, assert_one_line_error, auto_falls_back_to_the_emulator,
    run_binary,
};

const BINARY: &str = env!("CARGO_BIN_EXE_ch7-matmul");

fn ch7(args: &[&str]) -> Output {
    run_binary(BINARY, args)
}

#[test]
fn bad_flags_are_refused_in_one_line() {
    assert_bad_common_flags_refused(BINARY, ch7_matmul::VARIANTS);
    assert_one_line_error(&ch7(&["--size", "0"]), "--size 0 is outside 1..=16384");
    assert_one_line_error(
        &ch7(&["--size", "100000"]),
        "--size 100000 is outside 1..=16384",
    );
    assert_one_line_error(&ch7(&["--size", "big"]), "invalid value 'big' for '--size");
    assert_one_line_error(&ch7(&["--chunks", "0"]), "--chunks 0 is outside 1..=256");
    assert_one_line_error(&ch7(&["--streams", "33"]), "--streams 33 is outside 1..=32");
}

#[test]
fn cuda_without_a_driver_says_so_in_one_sentence() {
    assert_cuda_without_a_driver_is_one_sentence(BINARY, "naive");
}

#[test]
fn auto_without_a_gpu_falls_back_to_the_emulator_and_says_so_first() {
    let Some(stdout) = auto_falls_back_to_the_emulator(BINARY, &["--variant", "tiled"]) else {
        return;
    };
    assert!(stdout.contains("C: ✓ all 1728 values within"), "{stdout}");
}

#[test]
fn list_names_every_variant() {
    assert_list_names_every_variant(BINARY, ch7_matmul::VARIANTS);
}
