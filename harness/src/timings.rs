//! Where one run's time goes, phase by phase: what `racetrack check --timings` prints.
//!
//! Phases are recorded wherever the work happens (finding NVRTC, compiling, loading, filling,
//! launching, copying back) into one list per process; a phase recorded twice adds up. Recording
//! is a lock and a push, cheap enough to stay on.

use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The phases, in the order a run meets them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Phase {
    /// Reading the `.cu` file, leaving out its host code, finding its headers.
    Front,
    /// Finding and loading NVRTC (`python3`'s site-packages are asked where pip put it).
    FindNvrtc,
    /// NVRTC compiling, or the compile cache answering instead.
    Compile,
    /// Opening the backend: the driver and a context, or the emulator.
    Open,
    /// PTX parsed by the emulator, or loaded by the driver.
    Load,
    /// Making the arguments' host data and uploading it.
    Fill,
    /// The kernel itself, to its end.
    Launch,
    /// Downloading every buffer.
    CopyBack,
}

impl Phase {
    pub fn name(self) -> &'static str {
        match self {
            Self::Front => "front end",
            Self::FindNvrtc => "find NVRTC",
            Self::Compile => "compile",
            Self::Open => "open backend",
            Self::Load => "load",
            Self::Fill => "fill",
            Self::Launch => "launch",
            Self::CopyBack => "copy back",
        }
    }
}

/// One phase's total and what it did (`cache hit`, `NVRTC`, …), in the order first recorded.
#[derive(Debug, Clone, PartialEq)]
pub struct Timing {
    pub phase: Phase,
    pub took: Duration,
    /// How often it ran.
    pub count: u32,
    /// Notes, e.g. how many compiles the cache answered.
    pub notes: Vec<String>,
}

static RECORDED: Mutex<Vec<Timing>> = Mutex::new(Vec::new());

/// Adds `took` to `phase`.
pub fn record(phase: Phase, took: Duration) {
    record_with(phase, took, None);
}

/// Adds `took` to `phase`, with a note that says what it did (kept once).
pub fn record_with(phase: Phase, took: Duration, note: Option<&str>) {
    let Ok(mut recorded) = RECORDED.lock() else {
        return;
    };
    let at = match recorded.iter().position(|timing| timing.phase == phase) {
        Some(at) => at,
        None => {
            recorded.push(Timing {
                phase,
                took: Duration::ZERO,
                count: 0,
                notes: Vec::new(),
            });
            recorded.len() - 1
        }
    };
    let timing = &mut recorded[at];
    timing.took += took;
    timing.count += 1;
    if let Some(note) = note
        && !timing.notes.iter().any(|known| known == note)
    {
        timing.notes.push(note.to_string());
    }
}

/// Runs `work` and records how long it took under `phase` (less what timers inside it took).
pub fn time<T>(phase: Phase, work: impl FnOnce() -> T) -> T {
    let _timer = Timer::start(phase);
    work()
}

thread_local! {
    /// For each running [`Timer`] of this thread, innermost last: the time its inner timers took.
    static INNER: std::cell::RefCell<Vec<Duration>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Records the time from [`Timer::start`] to its drop under its phase. Timers nest: a phase
/// timed inside another (finding NVRTC while compiling) counts for itself only, so the phases
/// add up to the whole.
#[derive(Debug)]
pub struct Timer {
    phase: Phase,
    started: Instant,
    note: Option<&'static str>,
}

impl Timer {
    pub fn start(phase: Phase) -> Self {
        INNER.with(|inner| inner.borrow_mut().push(Duration::ZERO));
        Self {
            phase,
            started: Instant::now(),
            note: None,
        }
    }

    /// What this run of the phase did (`from the compile cache`), shown beside its time.
    pub fn note(&mut self, note: &'static str) {
        self.note = Some(note);
    }
}

impl Drop for Timer {
    fn drop(&mut self) {
        let took = self.started.elapsed();
        let inner = INNER.with(|inner| {
            let mut stack = inner.borrow_mut();
            let nested = stack.pop().unwrap_or_default();
            if let Some(outer) = stack.last_mut() {
                *outer += took;
            }
            nested
        });
        record_with(self.phase, took.saturating_sub(inner), self.note);
    }
}

/// Everything recorded so far, in the order a run meets the phases; the list is emptied.
pub fn take() -> Vec<Timing> {
    let mut taken = RECORDED
        .lock()
        .map(|mut recorded| std::mem::take(&mut *recorded))
        .unwrap_or_default();
    taken.sort_by_key(|timing| timing.phase);
    taken
}

/// The table `--timings` prints: one line per phase, then the whole run since `started`.
pub fn table(timings: &[Timing], started: Instant) -> String {
    let mut text = String::from("timings:\n");
    let ms = |duration: Duration| duration.as_secs_f64() * 1e3;
    for timing in timings {
        let mut notes = timing.notes.clone();
        if timing.count > 1 {
            notes.insert(0, format!("{}×", timing.count));
        }
        let notes = if notes.is_empty() {
            String::new()
        } else {
            format!("  ({})", notes.join(", "))
        };
        text.push_str(&format!(
            "  {:<13}{:>9.1} ms{notes}\n",
            timing.phase.name(),
            ms(timing.took)
        ));
    }
    text.push_str(&format!(
        "  {:<13}{:>9.1} ms  (since the process started its work)\n",
        "total",
        ms(started.elapsed())
    ));
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn phases_add_up_nest_and_come_in_run_order() {
        // Other tests of this binary may record too (compiles, launches): only this test takes
        // the list, and it asserts on phases the library's tests do not time (`Open` is the
        // binary's), or with margins.
        record_with(Phase::CopyBack, Duration::from_millis(3), None);
        record_with(
            Phase::Compile,
            Duration::from_millis(2),
            Some("from the compile cache"),
        );
        record_with(
            Phase::Compile,
            Duration::from_millis(5),
            Some("from the compile cache"),
        );
        {
            let mut outer = Timer::start(Phase::Open);
            outer.note("outer");
            time(Phase::Front, || {
                std::thread::sleep(Duration::from_millis(40))
            });
        }
        let taken = take();
        let find = |phase| {
            taken
                .iter()
                .find(|timing| timing.phase == phase)
                .unwrap_or_else(|| panic!("{phase:?} was not recorded: {taken:?}"))
        };
        let compile = find(Phase::Compile);
        assert!(compile.took >= Duration::from_millis(7));
        assert!(compile.count >= 2);
        assert!(
            compile
                .notes
                .contains(&"from the compile cache".to_string())
        );
        assert!(find(Phase::Front).took >= Duration::from_millis(40));
        let open = find(Phase::Open);
        assert!(
            open.took < Duration::from_millis(20),
            "the inner phase's 40 ms counted for the outer one too: {open:?}"
        );
        assert_eq!(open.notes, vec!["outer".to_string()]);
        let order: Vec<Phase> = taken.iter().map(|timing| timing.phase).collect();
        let mut sorted = order.clone();
        sorted.sort();
        assert_eq!(order, sorted);
        let text = table(&taken, Instant::now());
        assert!(text.contains("  compile "), "{text}");
        assert!(text.contains("  total "), "{text}");
    }
}
