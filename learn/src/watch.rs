//! Watch mode: the current exercise, checked again on every save, on a screen that fits an
//! 80-column terminal. [`Watch`] is the whole state machine: tests feed it events and read the
//! screen it renders; [`run_terminal`] connects it to file events and key presses.

use std::collections::HashMap;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::{Duration, SystemTime};

use crate::check::{Failure, Options, Report, check_source};
use crate::cli::{first_unfinished, hint_lines, list_columns, title_lines};
use crate::exercise::{Chapter, Exercise, WIDTH};
use crate::hint::Asked;
use crate::progress::Progress;
use crate::render::{Shown, fit, report_lines_shown};
use crate::track::track;
use crate::workspace::Workspace;

/// What the learner does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    /// Something happened to a file under `exercises/`: written, or only opened (inotify
    /// reports opens too, the check's own read of the file among them), so [`Watch`] checks
    /// again only when the file's modification time or length changed.
    Saved(PathBuf),
    Key(char),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flow {
    Continue,
    Quit,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum View {
    Exercise,
    List,
    /// Every exercise passes: what was done, and where to go from here.
    Complete,
}

pub struct Watch {
    workspace: Workspace,
    options: Options,
    progress: Progress,
    current: usize,
    report: Option<Report>,
    view: View,
    hint: Vec<String>,
    /// One line above the keys: files written, everything done.
    note: Option<String>,
    /// `a`: every finding of a failed check, not only the first two.
    all_findings: bool,
    /// Each exercise file's modification time and length when last seen: an event that
    /// leaves them as they were is an open, not a save.
    stamps: HashMap<PathBuf, Stamp>,
    /// The terminal's rows, which the screen never outgrows.
    height: usize,
}

type Stamp = (Option<SystemTime>, u64);

fn stamp(path: &Path) -> Option<Stamp> {
    let metadata = std::fs::metadata(path).ok()?;
    Some((metadata.modified().ok(), metadata.len()))
}

impl std::fmt::Debug for Watch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Watch")
            .field("current", &self.current().name)
            .finish_non_exhaustive()
    }
}

const KEYS: &str = "h hint · a all findings · l list · n next · q quit · save to check again";
/// Lines the list view has for the track and its two rules: a 24-line terminal less the
/// header line and the keys line.
const LIST_LINES: usize = 22;
/// A terminal's rows until it says otherwise.
pub const TERMINAL_ROWS: usize = 24;
/// The fewest report lines an exercise's screen keeps however short the terminal: the verdict
/// and the line it names.
const REPORT_ROOM: usize = 6;

impl Watch {
    /// Writes any missing exercise files, picks the first unfinished exercise and checks it.
    pub fn start(workspace: Workspace, options: Options) -> anyhow::Result<Self> {
        let written = workspace.ensure_files(track())?;
        let progress = workspace.progress()?;
        let current = first_unfinished(&progress)
            .and_then(|first| track().iter().position(|e| e.name == first.name))
            .unwrap_or(0);
        let mut watch = Self {
            workspace,
            options,
            progress,
            current,
            report: None,
            view: View::Exercise,
            hint: Vec::new(),
            note: (written > 0).then(|| {
                let s = if written == 1 { "" } else { "s" };
                format!("wrote {written} exercise file{s} under exercises/: yours to edit")
            }),
            stamps: HashMap::new(),
            all_findings: false,
            height: TERMINAL_ROWS,
        };
        for index in 0..track().len() {
            let file = watch.file_of(index);
            if let Some(stamp) = stamp(&file) {
                watch.stamps.insert(file, stamp);
            }
        }
        watch.check();
        Ok(watch)
    }

    pub fn current(&self) -> &'static Exercise {
        &track()[self.current]
    }

    /// The file of the exercise being watched.
    pub fn current_file(&self) -> PathBuf {
        self.workspace.file(self.current())
    }

    /// Handles one event; checking again where it calls for it.
    pub fn handle(&mut self, event: Event) -> Flow {
        match event {
            Event::Saved(path) => {
                if let Some(index) = self.changed_exercise(&path) {
                    self.current = index;
                    self.view = View::Exercise;
                    self.hint.clear();
                    self.note = None;
                    self.check();
                } else if path.file_name() == self.workspace.progress_path().file_name() {
                    // `cargo learn check` in another terminal recorded something
                    if let Ok(progress) = self.workspace.progress() {
                        self.progress = progress;
                    }
                }
            }
            Event::Key('q' | 'Q' | '\u{3}') => return Flow::Quit,
            Event::Key('h') => {
                self.view = View::Exercise;
                let exercise = self.current();
                // The hint follows the last check of the file, which every save runs again.
                if let Some(report) = self.report.clone() {
                    self.hint = self.change_progress(|progress| {
                        hint_lines(exercise, &report, progress, Asked::Key)
                    });
                }
            }
            Event::Key('a') => {
                self.view = View::Exercise;
                self.all_findings = !self.all_findings;
                // A key that changes nothing on screen must still say it was heard.
                if let Some(report) = &self.report {
                    let exercise = self.current();
                    let first = Shown::First {
                        how_to_see_all: "press a to see every finding",
                    };
                    let nothing_hidden = report_lines_shown(report, exercise, Shown::All)
                        == report_lines_shown(report, exercise, first);
                    self.note = nothing_hidden
                        .then(|| "a: every finding is already on the screen".to_string());
                }
            }
            Event::Key('l') => {
                self.view = match self.view {
                    View::List => View::Exercise,
                    View::Exercise | View::Complete => View::List,
                };
            }
            Event::Key('e') if self.view == View::Complete => self.view = View::Exercise,
            Event::Key('n') => {
                self.view = View::Exercise;
                self.hint.clear();
                match self.next_unfinished() {
                    Some(index) => {
                        self.current = index;
                        self.note = None;
                        self.check();
                    }
                    None => self.view = View::Complete,
                }
            }
            Event::Key(_) => {}
        }
        Flow::Continue
    }

    /// What the terminal shows now, every line within 80 columns (and the list within 24 lines).
    pub fn screen(&self) -> String {
        let done = track()
            .iter()
            .filter(|e| self.progress.is_done(e.name))
            .count();
        let rule = "─".repeat(WIDTH);
        let mut lines = vec![format!(
            "Racetrack · learn by fixing · {done} of {} done",
            track().len()
        )];
        match self.view {
            View::List => {
                // The rules go first when the track outgrows a 24-line terminal; the names stay.
                let list = list_columns(&self.progress, self.current().name);
                let rules = LIST_LINES.saturating_sub(list.len()).min(2);
                if rules == 2 {
                    lines.push(rule.clone());
                }
                lines.extend(list);
                if rules >= 1 {
                    lines.push(rule);
                }
                lines.push(
                    "l back to the exercise · q quit · `cargo learn list` has the titles".into(),
                );
            }
            View::Exercise => lines.extend(self.exercise_lines(&rule)),
            View::Complete => lines.extend(complete_lines(&rule)),
        }
        fit(lines).join("\n")
    }

    /// Sets the terminal's rows: the exercise's screen cuts its report to fit them (at least
    /// the verdict and the line it names).
    pub fn set_height(&mut self, rows: usize) {
        self.height = rows;
    }

    /// The exercise's title, its report, the hint asked for and the keys, within the terminal's
    /// rows: where they do not fit, the title shrinks to one line (the name and the file), then
    /// the report's tail goes, counted, with the command that prints it whole.
    fn exercise_lines(&self, rule: &str) -> Vec<String> {
        let exercise = self.current();
        let mut title = fit(title_lines(exercise));
        let mut report = match &self.report {
            Some(report) => {
                let shown = if self.all_findings {
                    Shown::All
                } else {
                    Shown::First {
                        how_to_see_all: "press a to see every finding",
                    }
                };
                report_lines_shown(report, exercise, shown)
            }
            None => vec!["checking…".into()],
        };
        let hint = fit(self.hint.clone());
        let note = self.note.iter().cloned().collect::<Vec<_>>();
        let keys = fit(vec![KEYS.into()]);
        // the header line and the two rules
        let around = 3 + hint.len() + note.len() + keys.len();
        if around + title.len() + report.len() > self.height {
            // One line then, but still the file to open: the name and the path.
            title = fit(vec![format!("{} · {}", exercise.name, exercise.path())]);
        }
        let room = self
            .height
            .saturating_sub(around + title.len())
            .max(REPORT_ROOM);
        if report.len() > room {
            let whole = if self.all_findings {
                format!("`cargo learn check {} --all`", exercise.name)
            } else {
                format!("`cargo learn check {}`", exercise.name)
            };
            let counted = |cut: usize| {
                let s = if cut == 1 { "" } else { "s" };
                fit(vec![format!(
                    "  … {cut} more line{s} than the terminal has room for: {whole} prints them"
                )])
            };
            // The count's own lines take room too: as many as the longest count needs.
            let kept = room.saturating_sub(counted(report.len()).len()).max(1);
            let counted = counted(report.len() - kept);
            report.truncate(kept);
            report.extend(counted);
        }
        let mut lines = title;
        lines.push(rule.to_string());
        lines.extend(report);
        lines.push(rule.to_string());
        lines.extend(hint);
        lines.extend(note);
        lines.extend(keys);
        lines
    }

    /// Whether `event` starts a check: a change to an exercise's file, or `n`.
    pub fn checks_on(&self, event: &Event) -> bool {
        match event {
            Event::Saved(path) => self.changed_exercise(path).is_some(),
            Event::Key(key) => *key == 'n',
        }
    }

    fn check(&mut self) {
        let exercise = self.current();
        // Stamped before the read, so that a save during the check is seen as a change.
        let file = self.file_of(self.current);
        if let Some(stamp) = stamp(&file) {
            self.stamps.insert(file, stamp);
        }
        let report = match self.workspace.read(exercise) {
            Ok(source) => check_source(exercise, &source, self.options),
            Err(error) => Report {
                exercise: exercise.name,
                path: exercise.path(),
                source: String::new(),
                outcome: Err(Failure::Setup(error.to_string())),
                notes: Vec::new(),
            },
        };
        let passed = report.passed();
        self.change_progress(|progress| progress.record(exercise.name, passed));
        self.report = Some(report);
        if passed && self.next_unfinished().is_none() {
            self.note = Some(format!(
                "every exercise passes: the track is complete · n: {AFTER_THE_TRACK}"
            ));
        }
    }

    /// Applies `change` to the progress file, read afresh so that what a check in another
    /// terminal recorded stays, and keeps the result; where the file cannot be read or written,
    /// applies it to this watch's copy and shows the error.
    fn change_progress<T>(&mut self, change: impl Fn(&mut Progress) -> T) -> T {
        match self.workspace.update_progress(&change) {
            Ok((progress, value)) => {
                self.progress = progress;
                value
            }
            Err(error) => {
                self.note = Some(error.to_string());
                change(&mut self.progress)
            }
        }
    }

    /// The exercise whose file is `path`, if that file changed since it was last seen.
    fn changed_exercise(&self, path: &Path) -> Option<usize> {
        let wanted = path.canonicalize().unwrap_or_else(|_| path.to_path_buf());
        let index = (0..track().len()).find(|&index| self.file_of(index) == wanted)?;
        let now = stamp(&wanted);
        (now.is_none() || self.stamps.get(&wanted) != now.as_ref()).then_some(index)
    }

    /// The file of the exercise at `index` in the track, canonical where it exists.
    fn file_of(&self, index: usize) -> PathBuf {
        let file = self.workspace.file(&track()[index]);
        file.canonicalize().unwrap_or(file)
    }

    /// The next exercise after the current one that has not passed, wrapping around.
    fn next_unfinished(&self) -> Option<usize> {
        let count = track().len();
        (1..count)
            .map(|step| (self.current + step) % count)
            .find(|&index| !self.progress.is_done(track()[index].name))
    }
}

/// What the `n` key shows once every exercise passes.
const AFTER_THE_TRACK: &str = "what comes after it";

/// The screen once every exercise passes: what the track covered, chapter by chapter, and
/// where the same checkers go next.
fn complete_lines(rule: &str) -> Vec<String> {
    let mut lines = vec![
        rule.to_string(),
        format!(
            "✓ The track is complete: all {} exercises pass.",
            track().len()
        ),
        "  Each ran generated cases under four schedules with racecheck, synccheck,".into(),
        "  memcheck and initcheck on, and matched the CPU. The speed goals (beat the".into(),
        "  chapter's kernel) need a GPU's clock: on the emulator they were skipped, as".into(),
        "  each exercise's screen said; on a machine with an NVIDIA GPU they count.".into(),
        String::new(),
    ];
    let chapters: Vec<String> = Chapter::ALL
        .iter()
        .map(|&chapter| {
            let count = track().iter().filter(|e| e.chapter == chapter).count();
            let s = if count == 1 { "" } else { "s" };
            format!("{chapter}: {count} exercise{s}")
        })
        .collect();
    let rows = chapters.len().div_ceil(2);
    let width = chapters
        .iter()
        .map(|c| c.chars().count())
        .max()
        .unwrap_or(0)
        + 4;
    for row in 0..rows {
        let left = &chapters[row];
        lines.push(match chapters.get(row + rows) {
            Some(right) => format!("  {left:<width$}{right}"),
            None => format!("  {left}"),
        });
    }
    lines.extend([
        String::new(),
        "Where the same checkers go next:".into(),
        "  · your own program, its main as written: cargo racetrack run prog.cu -- ARGS".into(),
        "    (nvcc's flags as its build line has them; no GPU needed)".into(),
        "  · one kernel with chosen arguments: cargo racetrack check kernel.cu --grid …".into(),
        "  · the book (book/): each chapter's kernels, fixed and broken, step by step".into(),
        "  · Numba, PyCUDA and CuPy programs: the Python package (python/README.md)".into(),
        rule.to_string(),
        "l list · e back to the exercise · q quit".into(),
    ]);
    fit(lines)
}

/// Watch mode in a terminal: file events from `notify` (debounced), keys read one byte at a
/// time in raw mode, the screen redrawn after each.
pub fn run_terminal(workspace: Workspace, options: Options) -> anyhow::Result<()> {
    use notify_debouncer_mini::notify::RecursiveMode;
    use notify_debouncer_mini::{DebounceEventResult, new_debouncer};

    let (sender, events) = mpsc::channel::<Event>();
    let files = sender.clone();
    let mut debouncer = new_debouncer(
        Duration::from_millis(200),
        move |result: DebounceEventResult| {
            if let Ok(changes) = result {
                for change in changes {
                    let _ = files.send(Event::Saved(change.path));
                }
            }
        },
    )?;
    let exercises = workspace.root().join("exercises");
    std::fs::create_dir_all(&exercises)?;
    println!("checking the first unfinished exercise…");
    let mut watch = Watch::start(workspace, options)?;
    watch.set_height(terminal_rows());
    debouncer
        .watcher()
        .watch(&exercises, RecursiveMode::Recursive)?;
    let raw = crossterm::terminal::enable_raw_mode().is_ok();
    // The terminal gets its echo back however the screen ends, a panic included.
    let cooked = raw.then_some(CookedAgain);
    std::thread::spawn(move || {
        let mut stdin = std::io::stdin().lock();
        let mut byte = [0u8; 1];
        while let Ok(1) = stdin.read(&mut byte) {
            if sender.send(Event::Key(char::from(byte[0]))).is_err() {
                break;
            }
        }
    });
    let mut shown = watch.screen();
    draw(&shown, raw)?;
    for event in events {
        let checks = watch.checks_on(&event);
        if checks {
            // in place of the keys line, so a screen as tall as the terminal keeps its title
            let busy = match shown.rsplit_once('\n') {
                Some((above, _keys)) => format!("{above}\nchecking…"),
                None => "checking…".into(),
            };
            draw(&busy, raw)?;
        }
        if watch.handle(event) == Flow::Quit {
            break;
        }
        watch.set_height(terminal_rows());
        // Events that change nothing (the progress file written, a file opened) leave the
        // screen as it is rather than redraw it.
        let screen = watch.screen();
        if checks || screen != shown {
            shown = screen;
            draw(&shown, raw)?;
        }
    }
    drop(cooked);
    println!();
    Ok(())
}

/// The terminal's rows now (it may have been resized since the last screen).
fn terminal_rows() -> usize {
    crossterm::terminal::size().map_or(TERMINAL_ROWS, |(_, rows)| usize::from(rows))
}

/// Leaves raw mode when dropped.
struct CookedAgain;

impl Drop for CookedAgain {
    fn drop(&mut self) {
        let _ = crossterm::terminal::disable_raw_mode();
    }
}

/// Clears the terminal and prints `screen`; in raw mode a newline does not return the carriage.
fn draw(screen: &str, raw: bool) -> std::io::Result<()> {
    let mut out = std::io::stdout().lock();
    write!(out, "\x1b[2J\x1b[H")?;
    let newline = if raw { "\r\n" } else { "\n" };
    write!(out, "{}", screen.replace('\n', newline))?;
    out.flush()
}
