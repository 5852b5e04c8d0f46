//! The binary as a user meets it: bad flags and missing hardware give one line and a non-zero
//! exit, never a panic.

use std::process::Output;

use harness::testing::{assert_one_line_error, run_binary, stderr};

fn ch2(args: &[&str]) -> Output {
    run_binary(env!("CARGO_BIN_EXE_ch2-reductions"), args)
}

#[test]
fn bad_flags_are_refused_in_one_line() {
    assert_one_line_error(
        &ch2(&["--backend", "opencl"]),
        "invalid value 'opencl' for '--backend",
    );
    assert_one_line_error(
        &ch2(&["--variant", "nope"]),
        "unknown variant `nope`; this chapter has: naive-block-sum",
    );
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
    assert_one_line_error(
        &ch2(&["--schedule", "fast"]),
        "invalid value 'fast' for '--schedule",
    );
}

#[test]
fn cuda_without_a_driver_says_so_in_one_sentence() {
    if harness::backend::cuda_driver_present() {
        eprintln!(
            "this machine has an NVIDIA driver; the missing-driver message cannot be shown here"
        );
        return;
    }
    let output = ch2(&["--backend", "cuda", "--variant", "tree-reduction"]);
    assert_one_line_error(&output, "no NVIDIA driver was found");
    assert_eq!(stderr(&output).lines().count(), 1, "{}", stderr(&output));
}

#[test]
fn one_variant_runs_on_the_emulator_with_a_chosen_size() {
    if harness::backend::cuda_driver_present() {
        eprintln!("this machine has an NVIDIA driver; auto picks it");
        return;
    }
    let out = std::env::temp_dir().join(format!("racetrack-ch2-cli-{}", std::process::id()));
    let output = ch2(&[
        "--variant",
        "two-loads-tree",
        "--size",
        "1000",
        "--out",
        out.to_str().unwrap_or_default(),
    ]);
    std::fs::remove_dir_all(&out).ok();
    assert!(output.status.success(), "{}", stderr(&output));
    let stdout = String::from_utf8_lossy(&output.stdout);
    let first = stdout.lines().next().unwrap_or_default();
    assert!(
        first.starts_with("backend: emu") && first.contains("no NVIDIA driver found"),
        "{stdout}"
    );
    assert!(stdout.contains("1D input 1000 floats"), "{stdout}");
    assert!(stdout.contains("## 3. two-loads-tree"), "{stdout}");
    assert!(stdout.contains("✓ result"), "{stdout}");
    assert!(!stdout.contains("## GPU timing"), "{stdout}");
}

#[test]
fn list_names_every_variant() {
    let output = ch2(&["--list"]);
    assert!(output.status.success());
    let stdout = String::from_utf8_lossy(&output.stdout);
    for variant in ch2_reductions::VARIANTS {
        assert!(
            stdout.contains(variant.name) && stdout.contains(variant.kernel.path),
            "{stdout}"
        );
    }
}
