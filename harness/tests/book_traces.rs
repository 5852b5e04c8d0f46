//! The book's traces (`book/src/traces/*.js`) must be what `racetrack trace` records today from
//! the committed kernels, as the walk-through snapshots must be what the chapters print: each
//! file holds the command that made it, and this test runs that command again and compares.
//!
//! After a change to a kernel or to the emulator, regenerate them with
//! `RACETRACK_UPDATE_TRACES=1 cargo test -p harness --test book_traces`.

// Test helpers panic with context on purpose; a failed unwrap is a failed test.
#![allow(clippy::unwrap_used)]

use std::path::Path;

use clap::Parser;
use harness::ptx::workspace_root;
use harness::testing::require_pinned_nvrtc;
use harness::trace::{self, TraceArgs};
use serde_json::Value;

#[derive(Parser)]
struct TraceCommand {
    #[command(flatten)]
    args: TraceArgs,
}

fn trace_files(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .expect("book/src/traces exists")
        .map(|entry| entry.expect("a directory entry").path())
        .filter(|path| path.extension().is_some_and(|e| e == "js"))
        .collect();
    files.sort();
    files
}

#[test]
fn book_traces_are_what_racetrack_trace_records() {
    require_pinned_nvrtc();
    let root = workspace_root();
    // The commands name kernels by their repository paths, as the traces do.
    std::env::set_current_dir(&root).expect("the workspace root");
    let update = std::env::var_os("RACETRACK_UPDATE_TRACES").is_some();
    let files = trace_files(&root.join("book/src/traces"));
    assert!(files.len() >= 4, "too few traces: {files:?}");
    let mut stale = Vec::new();
    for file in &files {
        let relative = file.strip_prefix(&root).unwrap().display().to_string();
        let committed = std::fs::read_to_string(file).unwrap();
        let json = trace::json_of_script(&committed)
            .unwrap_or_else(|| panic!("{relative} is not a trace script"));
        let parsed: Value = serde_json::from_str(json)
            .unwrap_or_else(|error| panic!("{relative} holds no JSON trace: {error}"));
        assert_eq!(parsed["format"], "racetrack-trace", "{relative}");
        let command = parsed["command"].as_str().expect("a command");
        let words = trace::split_command_line(command);
        let argv = std::iter::once("trace".to_string())
            .chain(words)
            .chain(["--out".to_string(), relative.clone()]);
        let args = TraceCommand::try_parse_from(argv)
            .unwrap_or_else(|error| panic!("{relative}: `{command}` does not parse: {error}"))
            .args;
        assert_eq!(
            trace::command_line(&args),
            command,
            "{relative}: the command round-trips"
        );
        let fresh = trace::record(&args)
            .unwrap_or_else(|error| panic!("{relative}: `{command}` failed: {error}"));
        if fresh.text != committed {
            if update {
                trace::write(&args, &fresh).unwrap();
            } else {
                stale.push(relative);
            }
        }
    }
    assert!(
        stale.is_empty(),
        "stale traces (a kernel or the emulator changed): {stale:?}; regenerate them with \
         RACETRACK_UPDATE_TRACES=1 cargo test -p harness --test book_traces"
    );
}
