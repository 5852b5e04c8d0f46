//! What the runtime says: its own lines to stderr, each marked as Racetrack's (or only to
//! `--log-file`), findings also as JSON lines for `racetrack run`, and the program's device
//! `printf` output on its own stdout, where a GPU puts it.

use std::ffi::c_void;
use std::io::Write;

/// Marks every line the runtime writes, so a program's own output stays apart.
pub const PREFIX: &str = "racetrack: ";

pub use ptx_emu::run_env::{FINDINGS as FINDINGS_ENV, LOG as LOG_ENV};

pub struct Output {
    log: Option<std::fs::File>,
    findings: Option<std::fs::File>,
}

impl std::fmt::Debug for Output {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Output").finish_non_exhaustive()
    }
}

fn append(path: &std::ffi::OsStr) -> Option<std::fs::File> {
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .ok()
}

impl Output {
    pub fn from_env() -> Output {
        Output {
            log: std::env::var_os(LOG_ENV).and_then(|p| append(&p)),
            findings: std::env::var_os(FINDINGS_ENV).and_then(|p| append(&p)),
        }
    }

    /// Racetrack's own lines, each prefixed.
    pub fn say(&mut self, text: &str) {
        let mut marked = String::new();
        for line in text.lines() {
            marked.push_str(PREFIX);
            marked.push_str(line);
            marked.push('\n');
        }
        match self.log.as_mut() {
            Some(file) => {
                let _ = file.write_all(marked.as_bytes());
            }
            None => {
                flush_program_stdout();
                let _ = std::io::stderr().write_all(marked.as_bytes());
            }
        }
    }

    pub fn record(&mut self, json: &str) {
        if let Some(file) = self.findings.as_mut() {
            let _ = writeln!(file, "{json}");
        }
    }
}

unsafe extern "C" {
    static mut stdout: *mut libc::FILE;
    static mut stderr: *mut libc::FILE;
}

/// Text for the program's stdout, through C's own `stdout` so that it keeps its place among
/// the program's `printf`s.
pub fn program_stdout(text: &str) {
    if text.is_empty() {
        return;
    }
    // SAFETY: `stdout` is the C library's stream, valid for the process's life; fwrite copies
    // `text.len()` bytes from a live buffer.
    unsafe {
        libc::fwrite(text.as_ptr() as *const c_void, 1, text.len(), stdout);
    }
}

/// Text for the program's stderr (a failed assert's message), through C's `stderr` as the
/// program's own `fprintf(stderr, …)` would write it.
pub fn program_stderr(text: &str) {
    if text.is_empty() {
        return;
    }
    // SAFETY: `stderr` is the C library's stream, valid for the process's life; fwrite copies
    // `text.len()` bytes from a live buffer.
    unsafe {
        libc::fwrite(text.as_ptr() as *const c_void, 1, text.len(), stderr);
    }
}

/// Flushes the program's buffered stdout before Racetrack writes to stderr, so a terminal shows
/// the two in the order they happened.
pub fn flush_program_stdout() {
    // SAFETY: as above; fflush of the C library's own stream.
    unsafe {
        libc::fflush(stdout);
    }
}
