//! What the exercise tests share: NVRTC (every check compiles the learner's file), the backend
//! and scratch checkouts.

#![allow(dead_code)]

use std::path::{Path, PathBuf};

use harness::BackendChoice;
use learn::{Options, Workspace};

/// The emulator, and a GPU where `RACETRACK_BACKEND` asks for one (or auto finds one).
pub fn options() -> Options {
    Options {
        backend: BackendChoice::from_env().unwrap_or(BackendChoice::Auto),
    }
}

/// The emulator alone: what the book's screens show.
pub fn emulator() -> Options {
    Options {
        backend: BackendChoice::Emu,
    }
}

/// A scratch checkout root of this test's own, empty.
pub fn scratch(name: &str) -> (tempfile::TempDir, Workspace) {
    let dir = tempfile::Builder::new()
        .prefix(&format!("learn-{name}-"))
        .tempdir()
        .unwrap_or_else(|error| panic!("no scratch directory: {error}"));
    let workspace = Workspace::new(dir.path());
    (dir, workspace)
}

pub fn write(path: &Path, text: &str) {
    std::fs::write(path, text).unwrap_or_else(|error| panic!("{}: {error}", path.display()));
}

pub fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|error| panic!("{}: {error}", path.display()))
}

/// A screen's words, one space apart: what it says, wherever it wrapped its lines.
pub fn words(screen: &str) -> String {
    screen.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Every line of `screen` fits an 80-column terminal.
pub fn assert_fits_80_columns(screen: &str) {
    for line in screen.lines() {
        assert!(
            line.chars().count() <= 80,
            "{} columns: {line}\n{screen}",
            line.chars().count()
        );
    }
}

pub fn root_of(dir: &tempfile::TempDir) -> PathBuf {
    dir.path().to_path_buf()
}
