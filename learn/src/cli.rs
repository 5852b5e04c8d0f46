//! `cargo learn` and its subcommands.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use harness::BackendChoice;

use crate::check::{Failure, Options, Report, check_source};
use crate::exercise::{Exercise, WIDTH, learner_view};
use crate::hint::{self, Asked, Step, subject};
use crate::progress::Progress;
use crate::render::{Shown, fit, report_lines, report_lines_shown};
use crate::track::{find, track};
use crate::workspace::Workspace;

/// Fix broken CUDA kernels until the checkers are silent. With no command: the next unfinished
/// exercise, checked again on every save.
#[derive(Debug, clap::Parser)]
#[command(name = "cargo learn", version)]
pub struct Cli {
    /// The checkout whose exercises/ to use [default: the one this was built from]
    #[arg(long, global = true)]
    pub root: Option<PathBuf>,

    /// Where checks run: the emulator always; with auto (or cuda) then also on a GPU
    #[arg(long, value_enum, default_value_t = BackendChoice::Auto, env = "RACETRACK_BACKEND", global = true)]
    pub backend: BackendChoice,

    #[command(subcommand)]
    pub command: Option<Command>,
}

#[derive(Debug, clap::Subcommand)]
pub enum Command {
    /// Every exercise in order: done or not, chapter, name, title
    List,
    /// Checks the file, then the next hint about how it fails now [default: the first one not
    /// done]: where to look, what is wrong, what to change
    Hint { name: Option<String> },
    /// Check an exercise once, named or by its file: exit 0 when it passes, 1 when not
    Check {
        name: String,
        /// Show every finding, not only the first two
        #[arg(long)]
        all: bool,
    },
    /// Put an exercise back to its starting text
    Reset { name: String },
    /// Show the chapter's kernel that solves an exercise (only when asked by name)
    Solution { name: String },
}

impl Cli {
    pub fn workspace(&self) -> Workspace {
        self.root
            .clone()
            .map_or_else(Workspace::repository, Workspace::new)
    }

    pub fn options(&self) -> Options {
        Options {
            backend: self.backend,
        }
    }
}

/// Runs a subcommand, writing what the learner reads to `out`. Watch mode is the binary's.
pub fn run(cli: &Cli, out: &mut dyn Write) -> anyhow::Result<ExitCode> {
    let workspace = cli.workspace();
    let written = workspace.ensure_files(track())?;
    if written > 0 {
        writeln!(
            out,
            "wrote {written} exercise file{} under exercises/, yours to edit\n(`cargo learn reset NAME` puts one back as it was)\n",
            if written == 1 { "" } else { "s" }
        )?;
    }
    let progress = workspace.progress()?;
    match &cli.command {
        None => Ok(ExitCode::SUCCESS),
        Some(Command::List) => {
            for line in list_lines(&progress) {
                writeln!(out, "{line}")?;
            }
            Ok(ExitCode::SUCCESS)
        }
        Some(Command::Hint { name }) => {
            let mut progress = progress;
            let (exercise, report) = loop {
                let exercise = match name {
                    Some(name) => find(name).map_err(anyhow::Error::msg)?,
                    None => match first_unfinished(&progress) {
                        Some(exercise) => exercise,
                        None => {
                            writeln!(
                                out,
                                "Every exercise passes: there is nothing left to hint at."
                            )?;
                            return Ok(ExitCode::SUCCESS);
                        }
                    },
                };
                let source = workspace.read(exercise)?;
                let report = check_source(exercise, &source, cli.options());
                if let Err(Failure::NoNvrtc(sentence)) = &report.outcome {
                    anyhow::bail!("{sentence}");
                }
                // Without a name, the hint is for the first exercise that fails now: one fixed
                // since its last check counts as done, and the next is checked.
                if name.is_some() || !report.passed() {
                    break (exercise, report);
                }
                let (updated, ()) =
                    workspace.update_progress(|progress| progress.record(exercise.name, true))?;
                progress = updated;
            };
            let (_, lines) = workspace.update_progress(|progress| {
                progress.record(exercise.name, report.passed());
                hint_lines(exercise, &report, progress, Asked::Command)
            })?;
            for line in lines {
                writeln!(out, "{line}")?;
            }
            Ok(ExitCode::SUCCESS)
        }
        Some(Command::Check { name, all }) => {
            let exercise = find(name).map_err(anyhow::Error::msg)?;
            let source = workspace.read(exercise)?;
            let report = check_source(exercise, &source, cli.options());
            if let Err(Failure::NoNvrtc(sentence)) = &report.outcome {
                anyhow::bail!("{sentence}");
            }
            workspace
                .update_progress(|progress| progress.record(exercise.name, report.passed()))?;
            for line in fit(title_lines(exercise)) {
                writeln!(out, "{line}")?;
            }
            let lines = if *all {
                report_lines_shown(&report, exercise, Shown::All)
            } else {
                report_lines(&report, exercise)
            };
            for line in lines {
                writeln!(out, "{line}")?;
            }
            Ok(if report.passed() {
                ExitCode::SUCCESS
            } else {
                ExitCode::FAILURE
            })
        }
        Some(Command::Solution { name }) => {
            let exercise = find(name).map_err(anyhow::Error::msg)?;
            writeln!(
                out,
                "The chapter's kernel that solves {}, {}:\n",
                exercise.name, exercise.solution.path
            )?;
            write!(out, "{}", learner_view(exercise.solution.source, true))?;
            Ok(ExitCode::SUCCESS)
        }
        Some(Command::Reset { name }) => {
            let exercise = find(name).map_err(anyhow::Error::msg)?;
            // The learner's own version is kept beside the file: a reset typed by mistake, or
            // to compare, loses nothing.
            let kept = workspace.keep_changed(exercise)?;
            workspace.write_start(exercise)?;
            let (_, was_done) = workspace.update_progress(|progress| {
                let was_done = progress.is_done(exercise.name);
                progress.record(exercise.name, false);
                was_done
            })?;
            writeln!(out, "{} is back to its starting text", exercise.path())?;
            if let Some(kept) = kept {
                writeln!(out, "your version is kept in {kept}")?;
            }
            // The ✓ says the file passes now; a learner who reset a solved exercise should not
            // find it gone from the list without a word.
            if was_done {
                writeln!(out, "its ✓ is cleared until the file passes again")?;
            }
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// The first exercise in track order that has not passed.
/// `cargo learn` with no command where there is no terminal to watch in (a pipe, a script, an
/// editor's task): one check of the first unfinished exercise, as `cargo learn check` makes it,
/// rather than a screen that waits for keys no one can press.
pub fn run_without_terminal(cli: &Cli, out: &mut dyn Write) -> anyhow::Result<ExitCode> {
    writeln!(
        out,
        "cargo learn watches your file in a terminal; with none, here is one check of the first \
         unfinished exercise (`cargo learn check NAME` checks any, `cargo learn list` lists them)\n"
    )?;
    let progress = cli.workspace().progress()?;
    let Some(exercise) = first_unfinished(&progress) else {
        writeln!(out, "Every exercise passes.")?;
        return Ok(ExitCode::SUCCESS);
    };
    let once = Cli {
        root: cli.root.clone(),
        backend: cli.backend,
        command: Some(Command::Check {
            name: exercise.name.to_string(),
            all: false,
        }),
    };
    run(&once, out)
}

pub fn first_unfinished(progress: &Progress) -> Option<&'static Exercise> {
    track()
        .iter()
        .find(|exercise| !progress.is_done(exercise.name))
}

/// `racy-increment · ch4 atomics 1/4 · fix it`, the title, and the file.
pub fn title_lines(exercise: &Exercise) -> Vec<String> {
    let in_chapter = track()
        .iter()
        .filter(|other| other.chapter == exercise.chapter)
        .count();
    vec![
        format!(
            "{} · {} {}/{} · {}",
            exercise.name,
            exercise.chapter,
            exercise.number,
            in_chapter,
            exercise.start.label()
        ),
        format!("{}: {}", exercise.title, exercise.path()),
    ]
}

/// The whole track, one exercise a line: ✓ done or · not, chapter, name, fix or write, title.
pub fn list_lines(progress: &Progress) -> Vec<String> {
    let width = track().iter().map(|e| e.name.len()).max().unwrap_or(0);
    let mut lines: Vec<String> = track()
        .iter()
        .flat_map(|exercise| {
            let mark = if progress.is_done(exercise.name) {
                '✓'
            } else {
                '·'
            };
            // Whether the file starts as a broken kernel to fix or a TODO to write.
            let kind = match exercise.start {
                crate::exercise::Start::Fix(_) => "fix  ",
                crate::exercise::Start::Write { .. } => "write",
            };
            let head = format!(
                "{mark} {} {:<width$} {kind} ",
                exercise.chapter.short(),
                exercise.name,
            );
            // A title too long for the line goes on below, in its own column.
            let column = head.chars().count();
            let mut pieces = crate::exercise::wrap(exercise.title, WIDTH.saturating_sub(column));
            let first = format!("{head}{}", pieces.remove(0));
            std::iter::once(first)
                .chain(
                    pieces
                        .into_iter()
                        .map(move |p| format!("{}{p}", " ".repeat(column))),
                )
                .collect::<Vec<_>>()
        })
        .collect();
    let done = track().iter().filter(|e| progress.is_done(e.name)).count();
    lines.push(String::new());
    lines.push(format!(
        "{done} of {} done · `cargo learn check NAME` checks one",
        track().len()
    ));
    fit(lines)
}

/// The whole track in two columns, so that watch mode's list fits a 24-line terminal with its
/// header and keys: `▸4 ✓ racy-increment`, the chapter's number, done or not, the name; `▸`
/// marks `current`. `cargo learn list` has the titles.
pub fn list_columns(progress: &Progress, current: &str) -> Vec<String> {
    let cells: Vec<String> = track()
        .iter()
        .map(|exercise| {
            let mark = if progress.is_done(exercise.name) {
                '✓'
            } else {
                '·'
            };
            let here = if exercise.name == current { '▸' } else { ' ' };
            let number = &exercise.chapter.short()[2..];
            format!("{here}{number} {mark} {}", exercise.name)
        })
        .collect();
    let rows = cells.len().div_ceil(2);
    let (left, right) = cells.split_at(rows);
    let width = left.iter().map(|c| c.chars().count()).max().unwrap_or(0) + 2;
    let lines: Vec<String> = left
        .iter()
        .enumerate()
        .map(|(row, cell)| match right.get(row) {
            Some(other) => format!("{cell:<width$}{other}"),
            None => cell.clone(),
        })
        .collect();
    fit(lines)
}

/// Shows the next hint of `exercise` about how `report` (a check of the learner's file as it
/// is now) fails, recorded in `progress`.
pub fn hint_lines(
    exercise: &Exercise,
    report: &Report,
    progress: &mut Progress,
    asked: Asked,
) -> Vec<String> {
    let shown = progress.next_hint_about(exercise.name, &subject(report), Step::ALL.len());
    hint::hint_lines(exercise, report, shown, asked)
}
