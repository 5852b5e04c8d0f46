//! What the learner reads: a check's verdict as lines that fit an 80-column terminal.

use harness::{Finding, FindingKind};
use ptx_emu::ThreadRef;

use crate::check::{CaseFailure, Failure, GpuRun, Passed, Report};
use crate::exercise::{Exercise, Start, WIDTH, wrap};
use crate::goal::{Missed, Outcome};

/// Findings shown in full; the rest are counted.
const SHOWN_FINDINGS: usize = 2;
/// NVRTC log lines shown; the rest are counted.
const SHOWN_LOG_LINES: usize = 24;

/// How many of a failed case's findings a screen shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shown {
    /// The first few, then a line that counts the rest and says how to see every one (`press
    /// a`); `NAME` in it becomes the exercise's name.
    First {
        how_to_see_all: &'static str,
    },
    All,
}

/// The verdict of `report` on `exercise`: ✓ and what the fix taught, or ✗ and why, with the
/// first findings (`cargo learn check NAME --all` shows every one).
pub fn report_lines(report: &Report, exercise: &Exercise) -> Vec<String> {
    report_lines_shown(
        report,
        exercise,
        Shown::First {
            how_to_see_all: "`cargo learn check NAME --all` shows every finding",
        },
    )
}

/// [`report_lines`], with as many findings as `shown` says.
pub fn report_lines_shown(report: &Report, exercise: &Exercise, shown: Shown) -> Vec<String> {
    let lines = match &report.outcome {
        Ok(passed) => passed_lines(passed, exercise),
        Err(failure) => {
            let how = match shown {
                Shown::First { how_to_see_all } => {
                    Some(how_to_see_all.replace("NAME", exercise.name))
                }
                Shown::All => None,
            };
            let notes = report.notes.iter().map(|note| format!("! {note}"));
            notes
                .chain(failure_lines_shown(failure, &report.source, how.as_deref()))
                .collect()
        }
    };
    fit(lines)
}

fn passed_lines(passed: &Passed, exercise: &Exercise) -> Vec<String> {
    let mut lines = vec![format!("✓ {} passes", exercise.name)];
    lines.push(format!(
        "  emulator: {} generated cases under {} schedules (hardware, random, adversarial,",
        passed.emulator_cases, passed.schedules
    ));
    lines.push("  lanes) match the CPU; racecheck, synccheck, memcheck, initcheck silent".into());
    lines.push(match &passed.gpu {
        GpuRun::Ran { device, cases } => format!("  and {cases} cases on {device} match the CPU"),
        GpuRun::Skipped(why) => format!("  GPU: not run ({why}); the emulator's verdict stands"),
    });
    for goal in &passed.goals {
        lines.push(match goal {
            Outcome::Met(how) => format!("  ✓ {how}"),
            Outcome::Skipped(why) => format!("  · {why}"),
        });
    }
    lines.push(String::new());
    lines.push(match exercise.start {
        Start::Fix(_) => "What the fix taught:".into(),
        Start::Write { .. } => "What writing it taught:".into(),
    });
    for paragraph in exercise.taught.split("\n\n") {
        lines.extend(
            wrap(paragraph, WIDTH - 2)
                .into_iter()
                .map(|l| format!("  {l}")),
        );
    }
    lines
}

/// The ✗ lines of a failure; `source` is the learner's file, quoted where a report names a line.
pub fn failure_lines(failure: &Failure, source: &str) -> Vec<String> {
    failure_lines_shown(failure, source, None)
}

/// [`failure_lines`]; `how_to_see_all` set, only the first findings and that sentence.
fn failure_lines_shown(
    failure: &Failure,
    source: &str,
    how_to_see_all: Option<&str>,
) -> Vec<String> {
    let mut lines = Vec::new();
    match failure {
        Failure::NoNvrtc(sentence) => {
            lines.push(format!("✗ cannot check: {sentence}"));
        }
        Failure::Compile { log } => {
            lines.push("✗ NVRTC does not compile it; its log:".into());
            let log_lines: Vec<&str> = log.lines().collect();
            for line in log_lines.iter().take(SHOWN_LOG_LINES) {
                lines.push(format!("  {line}"));
            }
            if log_lines.len() > SHOWN_LOG_LINES {
                lines.push(format!(
                    "  … {} more lines",
                    log_lines.len() - SHOWN_LOG_LINES
                ));
            }
        }
        Failure::Kernel(message) => lines.push(format!("✗ {message}")),
        Failure::Setup(message) => lines.push(format!("✗ cannot check: {message}")),
        Failure::Case(case) => lines.extend(case_lines(case, source, how_to_see_all)),
        Failure::Goal(missed) => lines.extend(goal_lines(missed, source)),
    }
    lines
}

/// A missed goal: the conflicted lines with their counts, or the two times.
fn goal_lines(missed: &Missed, source: &str) -> Vec<String> {
    let mut lines = Vec::new();
    match missed {
        Missed::Banks {
            max_ways,
            over,
            case,
        } => {
            let goal = if *max_ways == 1 {
                "no bank conflicts".to_string()
            } else {
                format!("at most {max_ways}-way bank conflicts")
            };
            lines.push(format!(
                "✗ bank conflicts: results match the CPU and the checkers are silent; the goal is {goal}"
            ));
            let mut quoted = Vec::new();
            for line in over {
                if !quoted.contains(&line.at.line) {
                    quoted.push(line.at.line);
                    lines.push(quote(source, line.at.line));
                }
                let access = match (line.write, line.requests) {
                    (true, 1) => "store",
                    (true, _) => "stores",
                    (false, 1) => "load",
                    (false, _) => "loads",
                };
                lines.push(format!(
                    "      {} warp {access} of shared memory took {} passes through the banks, \
                     where {} would do without conflicts (up to {}-way)",
                    line.requests, line.wavefronts, line.ideal_wavefronts, line.worst_ways
                ));
            }
            lines.push(format!(
                "  counted by the emulator (32 banks of 4-byte words) in one launch: {case}"
            ));
        }
        Missed::Slower {
            rival,
            yours_ms,
            rival_ms,
            device,
            case,
        } => {
            lines.push(format!(
                "✗ too slow: results match the CPU, but the goal is to beat {rival} on {device}"
            ));
            lines.push(format!(
                "  yours {yours_ms:.3} ms a launch, {rival} {rival_ms:.3} ms ({:.2}× its time), {case}",
                yours_ms / rival_ms
            ));
            lines.push(format!(
                "  each the better of two means of {} launches after a warm-up, CUDA events",
                crate::goal::REPETITIONS
            ));
        }
    }
    lines
}

fn case_lines(case: &CaseFailure, source: &str, how_to_see_all: Option<&str>) -> Vec<String> {
    let mut lines = Vec::new();
    let (count, how) = match how_to_see_all {
        Some(how) => (SHOWN_FINDINGS, how),
        None => (case.findings.len(), ""),
    };
    for finding in case.findings.iter().take(count) {
        lines.extend(finding_lines(finding, source, case.axes));
    }
    match case.findings.len().saturating_sub(count) {
        0 => {}
        1 => lines.push(format!("  … and 1 more finding: {how}")),
        more => lines.push(format!("  … and {more} more findings: {how}")),
    }
    if let Some(wrong) = &case.wrong {
        let line = format!(
            "✗ wrong result: {} is {}, the CPU says {}",
            wrong.what, wrong.got, wrong.expected
        );
        match &wrong.summary {
            None => lines.push(line),
            // on the same line where it fits, else on its own rather than wrapped mid-value
            Some(summary) if line.chars().count() + summary.chars().count() + 3 <= WIDTH => {
                lines.push(format!("{line} ({summary})"));
            }
            Some(summary) => {
                lines.push(line);
                lines.push(format!("  ({summary})"));
            }
        }
    }
    if let Some(error) = &case.error {
        lines.push(format!("✗ {error}"));
    }
    lines.push(format!("  smallest failing case, on {}:", case.on));
    for (name, value) in &case.facts {
        lines.push(format!("    {name}: {value}"));
    }
    lines.extend(printf_lines(&case.printf));
    lines
}

/// The most lines of a case's `printf` output the screen shows.
const SHOWN_PRINTF_LINES: usize = 12;

/// What the kernel printed in the case, its first lines if many, each quoted as printed.
fn printf_lines(printed: &str) -> Vec<String> {
    let count = printed.lines().count();
    if count == 0 {
        return Vec::new();
    }
    let s = if count == 1 { "" } else { "s" };
    let mut lines = vec![format!("  printf output ({count} line{s}):")];
    lines.extend(
        printed
            .lines()
            .take(SHOWN_PRINTF_LINES)
            .map(|line| format!("    {line}")),
    );
    if count > SHOWN_PRINTF_LINES {
        lines.push(format!(
            "    … and {} more lines",
            count - SHOWN_PRINTF_LINES
        ));
    }
    lines
}

fn finding_lines(finding: &Finding, source: &str, launch_axes: [usize; 2]) -> Vec<String> {
    let location = finding
        .location
        .as_ref()
        .map(|l| format!(", {l}"))
        .unwrap_or_default();
    let title = match finding.kind {
        FindingKind::Race { hazard, space } => {
            format!("✗ racecheck: a race ({hazard}) on {space} memory{location}")
        }
        FindingKind::BarrierDivergence => {
            "✗ synccheck: barrier divergence, a __syncthreads() not every thread reaches".into()
        }
        FindingKind::Deadlock => {
            "✗ synccheck: deadlock, threads wait for each other forever".into()
        }
        FindingKind::OutOfBounds { space } => {
            format!("✗ memcheck: an access outside {space} memory{location}")
        }
        FindingKind::Misaligned { space } => {
            format!("✗ memcheck: a misaligned access to {space} memory{location}")
        }
        FindingKind::UninitializedRead { space } => {
            format!("✗ initcheck: a read of {space} memory nothing wrote{location}")
        }
        FindingKind::StepBudgetExhausted => "✗ the kernel did not finish".into(),
        // Findings the checkers gained after this page was written read as the emulator
        // titles them.
        _ => format!(
            "✗ {}",
            finding.to_string().lines().next().unwrap_or_default()
        ),
    };
    let mut lines = vec![title];
    let mut quoted: Vec<u32> = Vec::new();
    let named: Vec<&ThreadRef> = finding
        .accesses
        .iter()
        .map(|access| &access.thread)
        .chain(finding.threads.iter().map(|group| &group.example))
        .collect();
    let thread = |who: &ThreadRef| thread(who, &named, launch_axes);
    for access in &finding.accesses {
        quote_with_its_call(source, &access.at, &mut quoted, &mut lines);
        lines.push(format!("      {} by {}", access.op, thread(&access.thread)));
    }
    for group in &finding.threads {
        quote_with_its_call(source, &group.at, &mut quoted, &mut lines);
        let s = if group.threads == 1 { "" } else { "s" };
        lines.push(format!(
            "      {} thread{s} {} (e.g. {})",
            group.threads,
            barrier_as_written(&group.state),
            thread(&group.example)
        ));
    }
    let mut why = format!("  {}", finding.why);
    if finding.count > 1 {
        why.push_str(&format!("; seen {} times", finding.count));
    }
    lines.push(why);
    lines
}

/// The line at `at`, once, and for a line of a device function inlined into the kernel, the
/// kernel's line that calls it: the learner's own line, where a given helper's line alone
/// would not say whose call went wrong.
fn quote_with_its_call(
    source: &str,
    at: &ptx_emu::SourceLoc,
    quoted: &mut Vec<u32>,
    lines: &mut Vec<String>,
) {
    if !quoted.contains(&at.line) {
        quoted.push(at.line);
        lines.push(quote(source, at.line));
        // A helper's helper: the helper's call of it, then the kernel's call of the helper.
        let direct = at
            .inlined_at
            .filter(|&line| at.called_from.is_some_and(|outer| outer != line) && line != at.line);
        let mut callee = "it";
        for call in direct.into_iter().chain(at.called_from) {
            if !quoted.contains(&call) {
                quoted.push(call);
                lines.push(quote(source, call).replacen(
                    ": ",
                    &format!(", which calls {callee}: "),
                    1,
                ));
            }
            callee = "that";
        }
    }
}

/// `  line 9: x[0] = x[0] + 1;`
fn quote(source: &str, line: u32) -> String {
    if line == 0 {
        return "  (no line information)".into();
    }
    let code = source
        .lines()
        .nth(line as usize - 1)
        .map(str::trim)
        .unwrap_or_default();
    format!("  line {line}: {code}")
}

/// `block 3 thread 17`, or with more axes `block (1,2) thread (3,0)`: as many axes as the
/// launch has, or as any thread of the same finding (`named`) needs, so a report does not
/// call a thread of a 2D block `0` and its neighbour `(15,15)`.
fn thread(thread: &ThreadRef, named: &[&ThreadRef], [grid, block]: [usize; 2]) -> String {
    let block_axes = named
        .iter()
        .map(|t| used_axes(t.block))
        .fold(grid, usize::max);
    let thread_axes = named
        .iter()
        .map(|t| used_axes(t.thread))
        .fold(block, usize::max);
    format!(
        "block {} thread {}",
        axes(thread.block, block_axes),
        axes(thread.thread, thread_axes)
    )
}

/// 1, 2 or 3: the axes up to the last one that is not 0.
fn used_axes([_, y, z]: [u32; 3]) -> usize {
    match (y, z) {
        (0, 0) => 1,
        (_, 0) => 2,
        _ => 3,
    }
}

fn axes([x, y, z]: [u32; 3], count: usize) -> String {
    match count.max(used_axes([x, y, z])) {
        1 => x.to_string(),
        2 => format!("({x},{y})"),
        _ => format!("({x},{y},{z})"),
    }
}

/// A thread's state as the learner wrote the barrier: barrier 0 is every `__syncthreads()`, so
/// two of them at two lines are "this __syncthreads()" at each, not one "barrier 0".
fn barrier_as_written(state: &str) -> String {
    state
        .replace("arrived at barrier 0", "arrived at this __syncthreads()")
        .replace("waiting at barrier 0", "waiting at this __syncthreads()")
}

/// Every line within [`WIDTH`] columns: longer ones wrap at spaces, indented under their start.
pub fn fit(lines: Vec<String>) -> Vec<String> {
    let mut out = Vec::new();
    for line in lines {
        if line.chars().count() <= WIDTH {
            out.push(line);
            continue;
        }
        // A compiler's caret line is indented as far as its column: past half the screen, the
        // wrapped pieces start at half, where there is still room for them.
        let indent = line
            .chars()
            .take_while(|c| *c == ' ')
            .count()
            .min(WIDTH / 2);
        let pad = " ".repeat(indent + 2);
        let mut first = true;
        for piece in wrap(line.trim_start(), WIDTH - indent - 2) {
            let prefix = if first {
                " ".repeat(indent)
            } else {
                pad.clone()
            };
            first = false;
            // a word longer than the screen is cut, not left to overflow
            let mut text = format!("{prefix}{piece}");
            while text.chars().count() > WIDTH {
                let head: String = text.chars().take(WIDTH).collect();
                let rest: String = text.chars().skip(WIDTH).collect();
                out.push(head);
                text = format!("{pad}{rest}");
            }
            out.push(text);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::{WIDTH, fit};

    /// NVRTC's caret under a column far to the right of a long line: indented past the screen.
    #[test]
    fn lines_indented_past_the_screen_fit_with_every_word_kept() {
        for indent in [WIDTH - 3, WIDTH, WIDTH + 40, 3 * WIDTH] {
            let words = "^ error: operator -> or ->* applied to \"unsigned int\" instead of to a pointer type";
            let line = format!("{}{words}", " ".repeat(indent));
            let lines = fit(vec![line]);
            assert!(
                lines.iter().all(|l| l.chars().count() <= WIDTH),
                "{indent}: {lines:#?}"
            );
            let kept: String = lines.concat().split_whitespace().collect();
            assert_eq!(
                kept,
                words.split_whitespace().collect::<String>(),
                "{indent}"
            );
        }
    }
}
