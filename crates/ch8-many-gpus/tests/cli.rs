//! The binary as a user meets it: bad flags and missing hardware give one line and a non-zero
//! exit, never a panic.

use std::process::Output;

use harness::testing::{
    assert_bad_common_flags_refused, assert_cuda_without_a_driver_is_one_sentence,
    assert_list_names_every_variant, assert_one_line_error, auto_falls_back_to_the_emulator,
    run_binary,
};

const BINARY: &str = env!("CARGO_BIN_EXE_ch8-many-gpus");

fn ch8(args: &[&str]) -> Output {
    run_binary(BINARY, args)
}

#[test]
fn bad_flags_are_refused_in_one_line() {
    assert_bad_common_flags_refused(BINARY, ch8_many_gpus::VARIANTS);
    assert_one_line_error(
        &ch8(&["--size", "0"]),
        "--size 0 is outside 1..=268435456 floats per device (1 GiB)",
    );
    assert_one_line_error(
        &ch8(&["--devices", "1"]),
        "--devices 1 is outside 2..=8: a ring needs two devices",
    );
    assert_one_line_error(&ch8(&["--devices", "9"]), "--devices 9 is outside 2..=8");
    assert_one_line_error(
        &ch8(&["--devices", "two"]),
        "invalid value 'two' for '--devices",
    );
}

#[test]
fn cuda_without_a_driver_says_so_in_one_sentence() {
    assert_cuda_without_a_driver_is_one_sentence(BINARY, "ring-all-reduce");
}

#[test]
fn auto_without_a_gpu_falls_back_to_emulated_devices_and_says_so_first() {
    let Some(stdout) = auto_falls_back_to_the_emulator(
        BINARY,
        &["--variant", "ring-all-reduce", "--devices", "4"],
    ) else {
        return;
    };
    assert!(
        stdout.contains("4 devices on ptx-emu")
            && stdout.contains("3 reduce-scatter and 3 all-gather step(s)")
            && stdout.contains("✓ all 20011 values"),
        "{stdout}"
    );
}

#[test]
fn a_ring_of_eight_emulated_devices_names_the_race_of_the_missing_wait() {
    let output = ch8(&[
        "--backend",
        "emu",
        "--devices",
        "8",
        "--variant",
        "ring-without-wait",
    ]);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{stdout}");
    assert!(
        stdout.contains("race (read-after-write) between streams")
            && stdout.contains("06_ring_without_wait.cu:20: named ✓"),
        "{stdout}"
    );
}

#[test]
fn list_names_every_variant() {
    assert_list_names_every_variant(BINARY, ch8_many_gpus::VARIANTS);
}
