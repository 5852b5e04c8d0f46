//! Helpers for chapters' tests that run a binary as a user would.

use std::process::{Command, Output};

use crate::device::Device;
use crate::ptx::workspace_binary;

/// Runs a workspace binary (`env!("CARGO_BIN_EXE_…")`, or its staged copy on a GPU machine)
/// from a scratch directory, with the backend left to its flags.
pub fn run_binary(built: &str, args: &[&str]) -> Output {
    match Command::new(workspace_binary(built))
        .args(args)
        .current_dir(std::env::temp_dir())
        .env_remove(crate::BACKEND_ENV)
        .output()
    {
        Ok(output) => output,
        Err(error) => panic!("{built} does not start: {error}"),
    }
}

pub fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// The run failed, did not panic, and its first line is `error: …` containing `expected`.
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
