//! The binary as a user meets it: bad flags and missing hardware give one line and a non-zero
//! exit, never a panic.

use std::process::Output;

use harness::testing::{
    assert_bad_common_flags_refused, assert_cuda_without_a_driver_is_one_sentence,
    assert_list_names_every_variant, assert_one_line_error, auto_falls_back_to_the_emulator,
    run_binary, scratch_dir,
};

const BINARY: &str = env!("CARGO_BIN_EXE_ch2-reductions");

fn ch2(args: &[&str]) -> Output {
    run_binary(BINARY, args)
}

#[test]
fn bad_flags_are_refused_in_one_line() {
    assert_bad_common_flags_refused(BINARY, ch2_reductions::VARIANTS);
    assert_one_line_error(
        &ch2(&["--size", "0"]),
        "--size 0 is outside 1..=2147483648 floats",
    );
    assert_one_line_error(
        &ch2(&["--size", "lots"]),
        "invalid value 'lots' for '--size",
    );
    assert_one_line_error(
        &ch2(&["--size", "4294967296"]),
        "--size 4294967296 is outside 1..=2147483648 floats",
    );
}

#[test]
fn cuda_without_a_driver_says_so_in_one_sentence() {
    assert_cuda_without_a_driver_is_one_sentence(BINARY, "tree-reduction");
}

#[test]
fn one_variant_runs_on_the_emulator_with_a_chosen_size() {
    let out = scratch_dir("ch2-cli");
    let stdout = auto_falls_back_to_the_emulator(
        BINARY,
        &[
            "--variant",
            "two-loads-tree",
            "--size",
            "1000",
            "--out",
            out.to_str().unwrap_or_default(),
        ],
    );
    std::fs::remove_dir_all(&out).ok();
    let Some(stdout) = stdout else {
        return;
    };
    assert!(stdout.contains("1D input 1000 floats"), "{stdout}");
    assert!(stdout.contains("## 3. two-loads-tree"), "{stdout}");
    assert!(stdout.contains("✓ result"), "{stdout}");
    assert!(!stdout.contains("## GPU timing"), "{stdout}");
}

#[test]
fn list_names_every_variant() {
    assert_list_names_every_variant(BINARY, ch2_reductions::VARIANTS);
}
