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
    /// Finding NVRTC (`python3`'s site-packages are asked where pip put it), and loading it
    /// when a compile needs it: a compile the cache answers does not.
    FindNvrtc,
    /// NVRTC compiling, or the compile cache answering instead.
    Compile,
    /// Opening the backend: the driver and a context, or the emulator.
    Open,
    /// PTX parsed by the emulator, or loaded by the driver.
    Load,
    /// Making the arguments' host data and uploading it, on every core.
    Fill,
    /// The kernel itself, to its end.
    Launch,
    /// Downloading the buffers a report shows.
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
    /// For an emulator's launch: where its time went on the launch's thread (interpreter, race
    /// detector, joins, waiting, other), and each of its threads' busy time, added up by name
    /// over the launches.
    pub parts: Vec<(String, Duration)>,
    pub busy: Vec<(String, Duration)>,
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
    let timing = entry(&mut recorded, phase);
    timing.took += took;
    timing.count += 1;
    if let Some(note) = note
        && !timing.notes.iter().any(|known| known == note)
    {
        timing.notes.push(note.to_string());
    }
}

/// `phase`'s entry, made empty if it has none yet.
fn entry(recorded: &mut Vec<Timing>, phase: Phase) -> &mut Timing {
    let at = match recorded.iter().position(|timing| timing.phase == phase) {
        Some(at) => at,
        None => {
            recorded.push(Timing {
                phase,
                took: Duration::ZERO,
                count: 0,
                notes: Vec::new(),
                parts: Vec::new(),
                busy: Vec::new(),
            });
            recorded.len() - 1
        }
    };
    &mut recorded[at]
}

/// Adds an emulator launch's breakdown to the launch phase (whose time its timer records).
pub fn record_launch_parts(launch: &ptx_emu::LaunchTimings) {
    let Ok(mut recorded) = RECORDED.lock() else {
        return;
    };
    let timing = entry(&mut recorded, Phase::Launch);
    let parts = [
        ("interpreter", launch.interpreter),
        ("race detector", launch.race_detector),
        ("joins", launch.joins),
        ("waiting", launch.waiting),
        ("other", launch.other()),
    ];
    for (name, took) in parts {
        add_named(&mut timing.parts, name, took);
    }
    for thread in &launch.threads {
        add_named(&mut timing.busy, &thread.name, thread.busy);
    }
}

fn add_named(list: &mut Vec<(String, Duration)>, name: &str, took: Duration) {
    match list.iter_mut().find(|(known, _)| known == name) {
        Some((_, sum)) => *sum += took,
        None => list.push((name.to_string(), took)),
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
        for (name, took) in &timing.parts {
            text.push_str(&format!("    {name:<13}{:>7.1} ms\n", ms(*took)));
        }
        if !timing.busy.is_empty() {
            let busy: Vec<String> = timing
                .busy
                .iter()
                .map(|(name, took)| format!("{name} {:.1}", ms(*took)))
                .collect();
            let total: Duration = timing.busy.iter().map(|(_, took)| *took).sum();
            text.push_str(&format!(
                "    busy, ms: {}; {:.2} cores' worth\n",
                busy.join(", "),
                total.as_secs_f64() / timing.took.as_secs_f64().max(1e-9)
            ));
        }
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

    #[test]
    fn a_launchs_parts_and_threads_add_up_over_launches() {
        let launch = ptx_emu::LaunchTimings {
            total: Duration::from_millis(100),
            interpreter: Duration::from_millis(60),
            race_detector: Duration::from_millis(10),
            joins: Duration::from_millis(5),
            waiting: Duration::from_millis(20),
            threads: vec![
                ptx_emu::ThreadBusy {
                    name: "launch".into(),
                    busy: Duration::from_millis(80),
                    ..ptx_emu::ThreadBusy::default()
                },
                ptx_emu::ThreadBusy {
                    name: "launch worker 1".into(),
                    busy: Duration::from_millis(70),
                    ..ptx_emu::ThreadBusy::default()
                },
            ],
            ..ptx_emu::LaunchTimings::default()
        };
        let mut recorded = Vec::new();
        for _ in 0..2 {
            let timing = entry(&mut recorded, Phase::Launch);
            timing.took += launch.total;
            timing.count += 1;
        }
        // As `record_launch_parts` does, on a list of the test's own.
        let timing = entry(&mut recorded, Phase::Launch);
        for _ in 0..2 {
            add_named(&mut timing.parts, "interpreter", launch.interpreter);
            add_named(&mut timing.parts, "other", launch.other());
            for thread in &launch.threads {
                add_named(&mut timing.busy, &thread.name, thread.busy);
            }
        }
        assert_eq!(launch.other(), Duration::from_millis(5));
        assert_eq!(
            timing.parts,
            vec![
                ("interpreter".to_string(), Duration::from_millis(120)),
                ("other".to_string(), Duration::from_millis(10)),
            ]
        );
        let text = table(&recorded, Instant::now());
        assert!(text.contains("    interpreter    120.0 ms"), "{text}");
        assert!(
            text.contains("busy, ms: launch 160.0, launch worker 1 140.0; 1.50 cores' worth"),
            "{text}"
        );
    }
}
