//! The binary as a user meets it: bad flags and missing hardware give one line and a non-zero
//! exit, never a panic.

use std::process::Output;

use harness::testing::{
    assert_bad_common_flags_refused, assert_cuda_without_a_driver_is_one_sentence,
    assert_list_names_every_variant, assert_one_line_error, run_binary, scratch_dir, stderr,
};

const BINARY: &str = env!("CARGO_BIN_EXE_ch3-life");

fn ch3(args: &[&str]) -> Output {
    run_binary(BINARY, args)
}

#[test]
fn bad_flags_are_refused_in_one_line() {
    assert_bad_common_flags_refused(BINARY, ch3_life::VARIANTS);
    assert_one_line_error(
        &ch3(&["--size", "0"]),
        "--size 0 is outside 1..=32768 cells a side",
    );
    assert_one_line_error(
        &ch3(&["--size", "40000"]),
        "--size 40000 is outside 1..=32768 cells a side",
    );
    assert_one_line_error(&ch3(&["--size", "-5"]), "'-5'");
}

#[test]
fn an_unwritable_image_directory_is_one_sentence() {
    let file = scratch_dir("ch3-not-a-dir");
    std::fs::write(&file, b"a file, not a directory").unwrap();
    let out = file.join("images");
    let output = ch3(&[
        "--backend",
        "emu",
        "--variant",
        "step-double-buffer",
        "--out",
        out.to_str().unwrap(),
    ]);
    std::fs::remove_file(&file).ok();
    assert_one_line_error(&output, &format!("cannot create {}", out.display()));
    assert_eq!(stderr(&output).lines().count(), 1, "{}", stderr(&output));
}

#[test]
fn cuda_without_a_driver_says_so_in_one_sentence() {
    assert_cuda_without_a_driver_is_one_sentence(BINARY, "step-double-buffer");
}

#[test]
fn one_variant_runs_alone() {
    let output = ch3(&["--backend", "emu", "--variant", "iterate-single-block"]);
    assert!(output.status.success(), "{}", stderr(&output));
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(stdout.starts_with("backend: emu"), "{stdout}");
    assert!(
        stdout.contains("## 4. iterate-single-block") && !stdout.contains("## 5."),
        "{stdout}"
    );
    assert!(!stdout.contains("GPU timing"), "{stdout}");
}

#[test]
fn list_names_every_variant() {
    assert_list_names_every_variant(BINARY, ch3_life::VARIANTS);
}
