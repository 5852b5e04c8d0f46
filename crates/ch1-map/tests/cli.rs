//! The binary as a user meets it: bad flags and missing hardware give one line and a non-zero
//! exit, never a panic.

use std::process::Output;

use harness::testing::{
    assert_bad_common_flags_refused, assert_cuda_without_a_driver_is_one_sentence,
    assert_list_names_every_variant, assert_one_line_error, run_binary, scratch_dir, stderr,
};

const BINARY: &str = env!("CARGO_BIN_EXE_ch1-map");

fn ch1(args: &[&str]) -> Output {
    run_binary(BINARY, args)
}

#[test]
fn bad_flags_are_refused_in_one_line() {
    assert_bad_common_flags_refused(BINARY, ch1_map::VARIANTS);
    assert_one_line_error(
        &ch1(&["--size", "0"]),
        "--size 0 is outside 1..=2147483648 elements",
    );
    assert_one_line_error(
        &ch1(&["--size", "4294967296"]),
        "--size 4294967296 is outside 1..=2147483648 elements",
    );
    assert_one_line_error(
        &ch1(&["--size", "lots"]),
        "invalid value 'lots' for '--size",
    );
    assert_one_line_error(
        &ch1(&["--timing-size", "0"]),
        "--timing-size 0 is outside 1..=2147483648 elements",
    );
}

#[test]
fn cuda_without_a_driver_says_so_in_one_sentence() {
    assert_cuda_without_a_driver_is_one_sentence(BINARY, "scalar-multiply");
}

#[test]
fn one_variant_runs_on_the_emulator_with_a_chosen_size() {
    let out = scratch_dir("ch1-cli");
    let output = ch1(&[
        "--backend",
        "emu",
        "--variant",
        "sigmoid-grid-stride",
        "--size",
        "3001",
        "--out",
        out.to_str().unwrap_or_default(),
    ]);
    std::fs::remove_dir_all(&out).ok();
    assert!(output.status.success(), "{}", stderr(&output));
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(stdout.starts_with("backend: emu"), "{stdout}");
    assert!(stdout.contains("n = 3001 floats"), "{stdout}");
    assert!(stdout.contains("## 4. sigmoid-grid-stride"), "{stdout}");
    assert!(stdout.contains("✓ all 3001 values within"), "{stdout}");
    assert!(!stdout.contains("## GPU timing"), "{stdout}");
}

#[test]
fn list_names_every_variant() {
    assert_list_names_every_variant(BINARY, ch1_map::VARIANTS);
}
