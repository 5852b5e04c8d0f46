//! The binary as a user meets it: bad flags give one line and a non-zero exit, never a panic.

use std::process::Output;

use harness::testing::{assert_one_line_error, run_binary};

fn ch6(args: &[&str]) -> Output {
    run_binary(env!("CARGO_BIN_EXE_ch6-scans"), args)
}

#[test]
fn bad_flags_are_refused_in_one_line() {
    assert_one_line_error(
        &ch6(&["--variant", "nope"]),
        "unknown variant `nope`; this chapter has: hillis-steele-double-buffer",
    );
    assert_one_line_error(
        &ch6(&["--size", "0"]),
        "--size 0 is outside 1..=1073741824 elements",
    );
    // the wording of this one is clap's (or the harness's); the value must be named
    assert_one_line_error(&ch6(&["--schedule", "fast"]), "fast");
}

#[test]
fn list_names_every_variant() {
    let output = ch6(&["--list"]);
    assert!(output.status.success());
    let stdout = String::from_utf8_lossy(&output.stdout);
    for variant in ch6_scans::VARIANTS {
        assert!(
            stdout.contains(variant.name) && stdout.contains(variant.kernel.path),
            "{stdout}"
        );
    }
}
