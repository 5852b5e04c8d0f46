//! Helpers for chapters' tests: running a binary as a user would, and the checks every
//! chapter makes of its binary and its broken variants.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::device::{Device, Finding};
use crate::ptx::workspace_binary;
use crate::variant::{Expect, Variant};

/// Runs a workspace binary (`env!("CARGO_BIN_EXE_…")`, or its staged copy on a GPU machine)
/// from a scratch directory, with the backend left to its flags.
pub fn run_binary(built: &str, args: &[&str]) -> Output {
    run_binary_in(built, &std::env::temp_dir(), args)
}

/// [`run_binary`] in `dir`, so that the files it names are found there and reports name them
/// as given.
pub fn run_binary_in(built: &str, dir: &Path, args: &[&str]) -> Output {
    match Command::new(workspace_binary(built))
        .args(args)
        .current_dir(dir)
        .env_remove(crate::BACKEND_ENV)
        .output()
    {
        Ok(output) => output,
        Err(error) => panic!("{built} does not start: {error}"),
    }
}

/// Starts every command before waiting for any, so they run at the same time (a cache or an
/// install raced by several processes), and returns their outputs in order.
pub fn outputs_of_concurrent(commands: impl IntoIterator<Item = Command>) -> Vec<Output> {
    let children: Vec<_> = commands
        .into_iter()
        .map(|mut command| {
            command
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap_or_else(|error| panic!("{command:?} does not start: {error}"))
        })
        .collect();
    children
        .into_iter()
        .map(|child| {
            child
                .wait_with_output()
                .unwrap_or_else(|error| panic!("a started process was lost: {error}"))
        })
        .collect()
}

/// Whether a test of the cuda path can run here: `true` when a GPU opens, `false` (said on
/// stderr) without one. With `RACETRACK_BACKEND=cuda` a GPU is required, and its absence fails.
pub fn gpu_for_test() -> bool {
    let required = matches!(
        crate::BackendChoice::from_env(),
        Ok(crate::BackendChoice::Cuda)
    );
    match Device::open(crate::BackendChoice::Cuda) {
        Ok(_) => true,
        Err(error) => {
            assert!(!required, "RACETRACK_BACKEND=cuda, but {error}");
            eprintln!("skipped, no GPU: {error}");
            false
        }
    }
}

pub fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// The run failed, did not panic, and its stderr is one line, `error: …` containing `expected`.
pub fn assert_one_line_error(output: &Output, expected: &str) {
    let text = stderr(output);
    assert!(
        !output.status.success(),
        "exit status {:?} for: {text}",
        output.status
    );
    assert!(!text.contains("panicked"), "{text}");
    let first = text.lines().next().unwrap_or_default();
    assert!(
        first.starts_with("error:") && first.contains(expected),
        "{text}"
    );
    assert_eq!(
        text.trim_end().lines().count(),
        1,
        "more than one line: {text}"
    );
}

/// NVRTC, fetched as every command that compiles fetches it when it is not installed (see
/// [`crate::provision`]); where that is impossible the test fails with the sentence saying why,
/// in CI and on a laptop alike.
pub fn require_nvrtc() {
    if let Err(error) = crate::nvrtc::require_nvrtc() {
        panic!("{error}");
    }
}

/// [`require_nvrtc`], and it must be the NVRTC `kernels/ptx/` is generated with.
pub fn require_pinned_nvrtc() {
    if let Err(error) = crate::ptx::require_pinned_nvrtc() {
        panic!("{error}");
    }
}

/// CUDA's headers, fetched as `racetrack check` fetches them, for files that include them.
pub fn require_cuda_headers() {
    if let Err(error) = crate::nvrtc::require_cuda_headers() {
        panic!("{error}");
    }
}

/// The device `RACETRACK_BACKEND` names, announced on stderr; without a GPU, `auto` is the
/// emulator. Tests have nothing to run on without one, so failing to open is a panic here.
pub fn test_device() -> Device {
    match Device::from_env() {
        Ok(device) => {
            eprintln!("{}", device.banner());
            device
        }
        Err(error) => panic!("no backend to test on: {error}"),
    }
}

/// A directory of this test process's own under the system's temporary one, so tests that
/// write images run side by side without touching the workspace or each other.
pub fn scratch_dir(name: &str) -> PathBuf {
    std::env::temp_dir().join(format!("racetrack-{name}-{}", std::process::id()))
}

/// A walk-through's output as the book includes it: split at its sections, with `images`, the
/// scratch directory the test wrote to, shown as the default directory a reader's run prints.
pub fn book_sections(printed: Vec<u8>, images: &Path, chapter: &str) -> Vec<(String, String)> {
    let printed = match String::from_utf8(printed) {
        Ok(text) => text,
        Err(error) => panic!("the walk-through printed something that is not UTF-8: {error}"),
    };
    let default = crate::cli::default_out_dir(chapter);
    let printed = printed.replace(
        &images.display().to_string(),
        &default.display().to_string(),
    );
    crate::walk::sections(&printed)
}

/// The flags every chapter takes from [`crate::cli::CommonArgs`] refuse bad values the same
/// way in every binary: one `error:` line naming the value, and an unknown `--variant` lists
/// the chapter's variants.
pub fn assert_bad_common_flags_refused<K>(built: &str, variants: &[Variant<K>]) {
    let refused = |args: &[&str], expected: &str| {
        assert_one_line_error(&run_binary(built, args), expected);
    };
    refused(
        &["--backend", "opencl"],
        "invalid value 'opencl' for '--backend",
    );
    refused(
        &["--seed", "minus-one"],
        "invalid value 'minus-one' for '--seed",
    );
    refused(&["--seed", "-3"], "unexpected argument '-3' found");
    refused(
        &["--schedule", "fast"],
        "invalid value 'fast' for '--schedule",
    );
    let first = variants.first().map_or("", |v| v.name);
    refused(
        &["--variant", "nope"],
        &format!("unknown variant `nope`; this chapter has: {first}"),
    );
}

/// Without an NVIDIA driver, `--backend cuda` is one sentence that says so, not a panic from
/// the driver bindings. Where a driver is installed there is nothing to show, and it says so.
pub fn assert_cuda_without_a_driver_is_one_sentence(built: &str, variant: &str) {
    if crate::backend::cuda_driver_present() {
        eprintln!(
            "this machine has an NVIDIA driver; the missing-driver message cannot be shown here"
        );
        return;
    }
    let output = run_binary(built, &["--backend", "cuda", "--variant", variant]);
    assert_one_line_error(&output, "no NVIDIA driver was found");
    assert_eq!(stderr(&output).lines().count(), 1, "{}", stderr(&output));
}

/// Runs the binary with `--backend auto` (the default) where there is no NVIDIA driver: it must
/// succeed and say first that it fell back to the emulator. Returns its stdout for the chapter's
/// own checks, or `None` (saying why) on a machine with a driver, where auto picks the GPU.
pub fn auto_falls_back_to_the_emulator(built: &str, args: &[&str]) -> Option<String> {
    if crate::backend::cuda_driver_present() {
        eprintln!("this machine has an NVIDIA driver; auto picks it");
        return None;
    }
    let output = run_binary(built, args);
    assert!(output.status.success(), "{}", stderr(&output));
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    let first = stdout.lines().next().unwrap_or_default();
    assert!(
        first.starts_with("backend: emu") && first.contains("no NVIDIA driver found"),
        "{stdout}"
    );
    Some(stdout)
}

/// `--list` succeeds and names every variant with its kernel file.
pub fn assert_list_names_every_variant<K>(built: &str, variants: &[Variant<K>]) {
    let output = run_binary(built, &["--list"]);
    assert!(output.status.success(), "{}", stderr(&output));
    let stdout = String::from_utf8_lossy(&output.stdout);
    for variant in variants {
        assert!(
            stdout.contains(variant.name) && stdout.contains(variant.kernel.path),
            "{stdout}"
        );
    }
}

/// The broken variant's checker named its `// BUG:` line in `findings`; `case` says which
/// launch, for the failure message.
pub fn assert_bug_line_named<K>(variant: &Variant<K>, findings: &[Finding], case: &str) {
    let checker = match variant.expect {
        Expect::Race => "racecheck",
        Expect::BarrierDivergence | Expect::Deadlock => "synccheck",
        Expect::OutOfBounds => "memcheck",
        Expect::Correct | Expect::WrongResult | Expect::CompileError => "the checkers",
    };
    assert!(
        variant.expect.is_shown_by(findings, variant.bug_line()),
        "{checker} did not name {} ({case}): {findings:#?}",
        variant.bug_location().unwrap_or_default(),
    );
}

/// Proptest's configuration for a chapter's property test: the emulator is thousands of times
/// slower than a GPU and the whole suite must stay well under ten minutes on two cores, so the
/// case count depends on the backend; `source_file` (`file!()`) is where failures are persisted.
#[cfg(feature = "proptest")]
pub fn proptest_config(
    is_cuda: bool,
    on_gpu: u32,
    on_emulator: u32,
    source_file: &'static str,
) -> proptest::test_runner::Config {
    proptest::test_runner::Config {
        cases: if is_cuda { on_gpu } else { on_emulator },
        max_shrink_iters: 64,
        source_file: Some(source_file),
        ..proptest::test_runner::Config::default()
    }
}
