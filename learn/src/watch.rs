//! Watch mode: the current exercise, checked again on every save, on a screen that fits an
//! 80-column terminal. [`Watch`] is the whole state machine: tests feed it events and read the
//! screen it renders; [`run_terminal`] connects it to file events and key presses.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::Duration;

use crate::check::{Failure, Options, Report, check_source};
use crate::cli::{first_unfinished, hint_lines, list_lines, title_lines};
use crate::exercise::{Exercise, WIDTH};
use crate::progress::Progress;
use crate::render::{fit, report_lines};
use crate::track::track;
use crate::workspace::Workspace;

/// What the learner does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    /// A file under `exercises/` was written.
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
}

impl std::fmt::Debug for Watch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Watch")
            .field("current", &self.current().name)
            .finish_non_exhaustive()
    }
}

const KEYS: &str = "h hint · l list · n next · q quit · save the file to check it again";

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
            note: (written > 0)
                .then(|| format!("wrote {written} exercise files under exercises/: yours to edit")),
        };
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
                if let Some(index) = self.exercise_at(&path) {
                    self.current = index;
                    self.view = View::Exercise;
                    self.hint.clear();
                    self.note = None;
                    self.check();
                }
            }
            Event::Key('q' | 'Q' | '\u{3}') => return Flow::Quit,
            Event::Key('h') => {
                self.view = View::Exercise;
                self.hint = hint_lines(self.current(), &mut self.progress);
                self.save_progress();
            }
            Event::Key('l') => {
                self.view = match self.view {
                    View::List => View::Exercise,
                    View::Exercise => View::List,
                };
            }
            Event::Key('n') => {
                self.view = View::Exercise;
                self.hint.clear();
                match self.next_unfinished() {
                    Some(index) => {
                        self.current = index;
                        self.note = None;
                        self.check();
                    }
                    None => {
                        self.note = Some("every exercise passes: the track is done".into());
                    }
                }
            }
            Event::Key(_) => {}
        }
        Flow::Continue
    }

    /// What the terminal shows now, every line within 80 columns.
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
                lines.push(rule.clone());
                lines.extend(list_lines(&self.progress));
                lines.push(rule);
                lines.push("l back to the exercise · q quit".into());
            }
            View::Exercise => {
                let exercise = self.current();
                lines.extend(title_lines(exercise));
                lines.push(rule.clone());
                match &self.report {
                    Some(report) => lines.extend(report_lines(report, exercise)),
                    None => lines.push("checking…".into()),
                }
                lines.push(rule);
                if !self.hint.is_empty() {
                    lines.extend(self.hint.iter().cloned());
                }
                if let Some(note) = &self.note {
                    lines.push(note.clone());
                }
                lines.push(KEYS.into());
            }
        }
        fit(lines).join("\n")
    }

    fn check(&mut self) {
        let exercise = self.current();
        let report = match self.workspace.read(exercise) {
            Ok(source) => check_source(exercise, &source, self.options),
            Err(error) => Report {
                exercise: exercise.name,
                path: exercise.path(),
                source: String::new(),
                outcome: Err(Failure::Setup(error.to_string())),
            },
        };
        self.progress.record(exercise.name, report.passed());
        self.save_progress();
        self.report = Some(report);
    }

    fn save_progress(&mut self) {
        if let Err(error) = self.workspace.save_progress(&self.progress) {
            self.note = Some(error.to_string());
        }
    }

    fn exercise_at(&self, path: &Path) -> Option<usize> {
        let wanted = path.canonicalize().unwrap_or_else(|_| path.to_path_buf());
        track().iter().position(|exercise| {
            let file = self.workspace.file(exercise);
            file.canonicalize().unwrap_or(file) == wanted
        })
    }

    /// The next exercise after the current one that has not passed, wrapping around.
    fn next_unfinished(&self) -> Option<usize> {
        let count = track().len();
        (1..count)
            .map(|step| (self.current + step) % count)
            .find(|&index| !self.progress.is_done(track()[index].name))
    }
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
    debouncer
        .watcher()
        .watch(&exercises, RecursiveMode::Recursive)?;
    let raw = crossterm::terminal::enable_raw_mode().is_ok();
    std::thread::spawn(move || {
        let mut stdin = std::io::stdin().lock();
        let mut byte = [0u8; 1];
        while let Ok(1) = stdin.read(&mut byte) {
            if sender.send(Event::Key(char::from(byte[0]))).is_err() {
                break;
            }
        }
    });
    draw(&watch.screen(), raw)?;
    for event in events {
        let checks = match &event {
            Event::Saved(path) => watch.exercise_at(path).is_some(),
            Event::Key(key) => *key == 'n',
        };
        if checks {
            draw(&format!("{}\nchecking…", watch.screen()), raw)?;
        }
        if watch.handle(event) == Flow::Quit {
            break;
        }
        draw(&watch.screen(), raw)?;
    }
    if raw {
        crossterm::terminal::disable_raw_mode()?;
    }
    println!();
    Ok(())
}

/// Clears the terminal and prints `screen`; in raw mode a newline does not return the carriage.
fn draw(screen: &str, raw: bool) -> std::io::Result<()> {
    let mut out = std::io::stdout().lock();
    write!(out, "\x1b[2J\x1b[H")?;
    let newline = if raw { "\r\n" } else { "\n" };
    write!(out, "{}", screen.replace('\n', newline))?;
    out.flush()
}
