//! Device `printf` on a GPU: the driver writes it to the process's standard output when the
//! launch is synchronized. To report it beside the emulator's (and to keep `--json` output one
//! JSON object), the launch runs with file descriptor 1 sent to a temporary file.

use std::io::{Read, Seek, Write};
use std::sync::Mutex;

/// One capture at a time: file descriptor 1 belongs to the whole process.
static STDOUT: Mutex<()> = Mutex::new(());

/// Runs `work` with standard output sent to a temporary file and returns what was written.
/// Where the redirection cannot be set up, `work` runs as it is and nothing is captured.
#[cfg(unix)]
pub(crate) fn capture_stdout<T>(work: impl FnOnce() -> T) -> (T, String) {
    use std::os::fd::AsRawFd;
    let _one_at_a_time = STDOUT
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    let Ok(mut file) = temp_file() else {
        return (work(), String::new());
    };
    let _ = std::io::stdout().flush();
    // SAFETY: fflush(NULL) flushes every C stdio stream; dup and dup2 only duplicate valid file
    // descriptors (1 and the open file), and fd 1 is restored and the copy closed before return.
    let saved = unsafe {
        libc::fflush(std::ptr::null_mut());
        libc::dup(1)
    };
    // SAFETY: as above; `file` stays open until after fd 1 is restored.
    if saved < 0 || unsafe { libc::dup2(file.as_raw_fd(), 1) } < 0 {
        if saved >= 0 {
            // SAFETY: `saved` is the descriptor dup returned just above.
            unsafe { libc::close(saved) };
        }
        return (work(), String::new());
    }
    let result = work();
    // SAFETY: flushes C stdio into the file, then puts the original fd 1 back and closes the copy.
    unsafe {
        libc::fflush(std::ptr::null_mut());
        libc::dup2(saved, 1);
        libc::close(saved);
    }
    let mut text = String::new();
    if file.rewind().is_ok() {
        let mut bytes = Vec::new();
        let _ = file.read_to_end(&mut bytes);
        text = String::from_utf8_lossy(&bytes).into_owned();
    }
    (result, text)
}

#[cfg(not(unix))]
pub(crate) fn capture_stdout<T>(work: impl FnOnce() -> T) -> (T, String) {
    let _one_at_a_time = STDOUT
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    (work(), String::new())
}

/// A new file in the temporary directory, already unlinked where the platform allows it.
#[cfg(unix)]
fn temp_file() -> std::io::Result<std::fs::File> {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let path = std::env::temp_dir().join(format!(
        "racetrack-printf-{}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    ));
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create_new(true)
        .open(&path)?;
    let _ = std::fs::remove_file(&path);
    Ok(file)
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    /// Set in the child process that does the capturing; see the test below.
    const CHILD: &str = "RACETRACK_PRINTF_CAPTURE_CHILD";
    const TEST: &str =
        "device::printf_capture::tests::what_c_code_prints_is_captured_and_stdout_comes_back";

    /// The capture takes file descriptor 1 from the whole process, and libtest's other threads
    /// write their results there; so the capturing runs in a child process of this test binary
    /// that runs this test alone, and this process only checks that it passed.
    #[test]
    fn what_c_code_prints_is_captured_and_stdout_comes_back() {
        if std::env::var_os(CHILD).is_some() {
            capture_in_this_process();
            return;
        }
        let exe = std::env::current_exe().expect("the test binary's path");
        let output = std::process::Command::new(exe)
            .args([TEST, "--exact", "--test-threads=1", "--nocapture"])
            .env(CHILD, "1")
            .output()
            .expect("the test binary runs again");
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert!(
            output.status.success(),
            "the capturing child failed:\n{stdout}\n{}",
            String::from_utf8_lossy(&output.stderr)
        );
        assert!(
            stdout.contains("1 passed"),
            "the child ran no test:\n{stdout}"
        );
        // What was captured never reached the real standard output.
        assert!(!stdout.contains("from C stdio"), "{stdout}");
    }

    fn capture_in_this_process() {
        let message = std::ffi::CString::new("from C stdio\n").unwrap_or_default();
        let ((), text) = capture_stdout(|| {
            // SAFETY: printf with a plain format (no conversions) and no arguments.
            unsafe { libc::printf(message.as_ptr()) };
        });
        assert_eq!(text, "from C stdio\n");
        let ((), again) = capture_stdout(|| ());
        assert_eq!(again, "");
    }
}
