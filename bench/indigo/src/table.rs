//! The scoreboard: per planted-bug type, what happened and what the checker found.

use comfy_table::{Table, presets};

use crate::code::Bug;
use crate::run::{Outcome, Run};

/// Counts for one bug type (or for the bug-free codes).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Score {
    pub codes: usize,
    /// Codes whose bug the oracle sees happen on at least one input.
    pub codes_happening: usize,
    /// Of those, codes the checker reported on every input where the bug happens.
    pub codes_found: usize,
    pub runs: usize,
    pub runs_happening: usize,
    pub runs_found: usize,
    /// Runs with a finding where the oracle says the planted bug does not happen (for bug-free
    /// codes: every run with a finding).
    pub false_alarms: usize,
    /// Codes with at least one such run.
    pub codes_with_false_alarms: usize,
    pub errors: usize,
    pub timeouts: usize,
}

pub fn score(runs: &[Run], bug: Bug) -> Score {
    let mine: Vec<&Run> = runs.iter().filter(|run| run.code.bug == bug).collect();
    let mut codes: Vec<_> = mine.iter().map(|run| run.code).collect();
    codes.sort();
    codes.dedup();
    let mut score = Score {
        codes: codes.len(),
        runs: mine.len(),
        ..Score::default()
    };
    for code in codes {
        let of_code: Vec<&&Run> = mine.iter().filter(|run| run.code == code).collect();
        let happening: Vec<&&Run> = of_code
            .iter()
            .copied()
            .filter(|run| run.happens())
            .collect();
        if !happening.is_empty() {
            score.codes_happening += 1;
            if happening.iter().all(|run| run.found()) {
                score.codes_found += 1;
            }
        }
        let false_alarms = of_code
            .iter()
            .filter(|run| run.any_finding() && !run.happens())
            .count();
        score.false_alarms += false_alarms;
        score.codes_with_false_alarms += usize::from(false_alarms > 0);
    }
    for run in &mine {
        if run.happens() {
            score.runs_happening += 1;
            score.runs_found += usize::from(run.found());
        }
        match run.outcome {
            Outcome::Error(_) => score.errors += 1,
            Outcome::Timeout => score.timeouts += 1,
            _ => {}
        }
    }
    score
}

/// The scoreboard as a Markdown table, narrow enough for the book's page: "found / happens
/// (codes)" is the codes the checker reported on every input where the oracle sees the planted
/// bug happen, over the codes whose bug happens on some input; "(runs)" the same per run;
/// "false alarms" the runs with a finding where the oracle says the planted bug cannot happen
/// (for bug-free codes, any finding), and in brackets the codes they belong to.
pub fn markdown(runs: &[Run]) -> String {
    let mut table = Table::new();
    table.load_preset(presets::ASCII_MARKDOWN);
    table.set_header([
        "planted bug",
        "codes",
        "found / happens (codes)",
        "found / happens (runs)",
        "false alarms: runs (codes)",
        "errors / timeouts",
    ]);
    for bug in Bug::ALL {
        let s = score(runs, bug);
        if s.codes == 0 {
            continue;
        }
        let bug_free = bug == Bug::None;
        let ratio = |found: usize, happening: usize| {
            if bug_free {
                "—".to_string()
            } else {
                format!("{found} / {happening}")
            }
        };
        table.add_row([
            bug.name().to_string(),
            s.codes.to_string(),
            ratio(s.codes_found, s.codes_happening),
            ratio(s.runs_found, s.runs_happening),
            format!("{} ({})", s.false_alarms, s.codes_with_false_alarms),
            format!("{} / {}", s.errors, s.timeouts),
        ]);
    }
    table.to_string()
}

/// Every run whose result is not what the oracle expects, one line each: a missed bug, a finding
/// where none can be, an error or a timeout.
pub fn surprises(runs: &[Run]) -> Vec<String> {
    let mut lines = Vec::new();
    for run in runs {
        let what = match &run.outcome {
            Outcome::Error(line) => Some(format!("error: {line}")),
            Outcome::Timeout => Some("timeout".to_string()),
            _ if run.happens() && !run.found() => Some(format!(
                "missed: the oracle sees {} ({:?}), the checker reported {:?}",
                run.code.bug.name(),
                run.verdict,
                run.outcome
            )),
            _ if !run.happens() && run.any_finding() => Some(format!(
                "finding where the bug cannot happen: {:?}",
                run.outcome
            )),
            _ => None,
        };
        if let Some(what) = what {
            lines.push(format!("{} on {}: {what}", run.code, run.graph));
        }
    }
    lines
}
