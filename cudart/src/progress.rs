//! A line on the terminal while a launch runs long, so that a slow kernel on the emulator is
//! not a blank screen: after a second, `racetrack: 12 s on the emulator so far in
//! histogram<<<240, 192>>> at main.cu:88 (main) (Ctrl-C stops it and shows what was found)`,
//! redrawn as it goes and erased when the launch ends. Only when stderr is a terminal and
//! Racetrack's lines go there (no `--log-file`): nothing of it reaches a file or a pipe.

use std::io::Write;
use std::sync::{Mutex, MutexGuard, Once};
use std::time::{Duration, Instant};

/// Launches shorter than this show nothing.
const FIRST_AFTER: Duration = Duration::from_secs(1);
const REDRAW_EVERY: Duration = Duration::from_millis(500);

struct Running {
    what: String,
    since: Instant,
    /// A line is on the screen, to erase.
    shown: bool,
}

static RUNNING: Mutex<Option<Running>> = Mutex::new(None);
static DRAWER: Once = Once::new();

fn running() -> MutexGuard<'static, Option<Running>> {
    RUNNING
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn wanted() -> bool {
    // SAFETY: isatty only reads the descriptor's state.
    std::env::var_os(crate::out::LOG_ENV).is_none() && unsafe { libc::isatty(2) } == 1
}

/// The launch `what` (`kernel<<<grid, block>>> at file:line`) runs from now until the guard
/// drops.
pub fn launch(what: impl FnOnce() -> String) -> Shown {
    if !wanted() {
        return Shown(false);
    }
    DRAWER.call_once(|| {
        // One drawer for the program's life: launches come by the thousand.
        let _ = std::thread::Builder::new()
            .name("racetrack progress".into())
            .spawn(draw);
    });
    *running() = Some(Running {
        what: what(),
        since: Instant::now(),
        shown: false,
    });
    Shown(true)
}

/// Ends the line of the launch it was made for.
pub struct Shown(bool);

impl Drop for Shown {
    fn drop(&mut self) {
        if !self.0 {
            return;
        }
        if let Some(ended) = running().take()
            && ended.shown
        {
            let _ = std::io::stderr().write_all(b"\r\x1b[K");
        }
    }
}

fn draw() {
    loop {
        std::thread::sleep(REDRAW_EVERY);
        let mut slot = running();
        let Some(launch) = slot.as_mut() else {
            continue;
        };
        let elapsed = launch.since.elapsed();
        if elapsed < FIRST_AFTER {
            continue;
        }
        launch.shown = true;
        let line = fit(
            &format!(
                "{}{} s on the emulator so far in {}",
                crate::out::PREFIX,
                elapsed.as_secs(),
                launch.what
            ),
            " (Ctrl-C stops it and shows what was found)",
            columns(),
        );
        // Written while the slot is held, so that the launch's end erases it after, not before.
        let _ = std::io::stderr().write_all(format!("\r{line}\x1b[K").as_bytes());
    }
}

/// The terminal's width, 80 when it cannot say.
fn columns() -> usize {
    // SAFETY: TIOCGWINSZ fills the winsize it is given, and nothing else.
    unsafe {
        let mut size: libc::winsize = std::mem::zeroed();
        if libc::ioctl(2, libc::TIOCGWINSZ, &mut size) == 0 && size.ws_col > 0 {
            size.ws_col as usize
        } else {
            80
        }
    }
}

/// `line` and `hint` in one line of `columns` (a wrapped line is not redrawn in place): the
/// hint goes first, then the line's end.
fn fit(line: &str, hint: &str, columns: usize) -> String {
    let room = columns.saturating_sub(1);
    let (line_chars, hint_chars) = (line.chars().count(), hint.chars().count());
    if line_chars + hint_chars <= room {
        return format!("{line}{hint}");
    }
    if line_chars <= room {
        return line.to_string();
    }
    let kept: String = line.chars().take(room.saturating_sub(1)).collect();
    format!("{kept}…")
}

#[cfg(test)]
mod tests {
    use super::fit;

    #[test]
    fn a_line_fits_its_terminal() {
        assert_eq!(fit("abc", " (hint)", 80), "abc (hint)");
        assert_eq!(fit("abcdef", " (hint)", 10), "abcdef");
        assert_eq!(fit("abcdefghijkl", " (hint)", 10), "abcdefgh…");
        assert_eq!(fit("abcdefghijkl", " (hint)", 10).chars().count(), 9);
    }
}
