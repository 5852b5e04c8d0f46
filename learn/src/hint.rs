//! Hints that follow the learner: built from a check of the file as it is now, not from the
//! bug it started with. They climb in three steps, where to look (the current finding: its
//! kind, line and threads), what is wrong, what to change. When the file still fails the way
//! it started, the last two steps are the exercise's own hints; when the learner's change
//! brought another failure (a barrier moved into an `if`), they explain that one. The solution
//! stays behind `cargo learn solution NAME`: a hint names that command, never the file.

use crate::check::{Failure, Report};
use crate::exercise::{Exercise, Reason, WIDTH, without_spaces, wrap};
use crate::render::{failure_lines, fit};
use harness::{Expect, FindingKind};

/// The three steps, in the order they are shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    WhereToLook,
    WhatIsWrong,
    WhatToChange,
}

impl Step {
    pub const ALL: [Self; 3] = [Self::WhereToLook, Self::WhatIsWrong, Self::WhatToChange];

    fn title(self) -> &'static str {
        match self {
            Self::WhereToLook => "where to look",
            Self::WhatIsWrong => "what is wrong",
            Self::WhatToChange => "what to change",
        }
    }
}

/// Lines of the current failure quoted in "where to look": its first finding in full, or the
/// first lines of NVRTC's log; what is left out is counted, never dropped silently.
const WHERE_LINES: usize = 14;

/// What the hints of one report are about: the reason the file fails and the lines it names.
/// Progress keeps it, so a change that brings another failure starts the hints again at
/// "where to look".
pub fn subject(report: &Report) -> String {
    match &report.outcome {
        Ok(_) => "passes".into(),
        Err(failure) => match failure.reason() {
            // By the statements, not their line numbers: a line the learner adds above them
            // (a comment, a declaration) is no new failure, and the hints go on where they were.
            Some(reason) => {
                let statements: Vec<String> = failure
                    .lines_for(reason, &report.path)
                    .iter()
                    .map(|&line| {
                        statement(&report.source, line).unwrap_or_else(|| line.to_string())
                    })
                    .collect();
                format!("{reason} at {}", statements.join(" | "))
            }
            None => failure_lines(failure, &report.source)
                .first()
                .cloned()
                .unwrap_or_default(),
        },
    }
}

/// Whether the file (`source`, at `path`) still fails the way it started: the stated reason,
/// at the stated statement when the statement names one, wherever the learner's edits moved
/// it. Then the exercise's own hints fit.
pub fn is_starting_failure(
    exercise: &Exercise,
    failure: &Failure,
    path: &str,
    source: &str,
) -> bool {
    if exercise.fails.then_wrong_result
        && failure.reason() == Some(Reason::Check(Expect::WrongResult))
    {
        return true;
    }
    // An index past the end shows as a race once a partial guard keeps it inside the array
    // (threads past the last column write into the next row, where other threads write too):
    // at the stated statement alone, that race is the start in another form. (The other way
    // round, an access out of bounds at a racing statement, is the learner's own new index.)
    let slip_now = |now: Reason| {
        exercise.fails.reason == Reason::Check(Expect::OutOfBounds)
            && now == Reason::Check(Expect::Race)
    };
    let Some(now_reason) = failure.reason() else {
        return false;
    };
    let same_reason = now_reason == exercise.fails.reason;
    if !same_reason && !slip_now(now_reason) {
        return false;
    }
    let Some(line) = exercise.stated_line() else {
        return same_reason;
    };
    let named = failure.lines_for(now_reason, path);
    // A wrong result names no line: nothing tells it from the one the file started with.
    if named.is_empty() {
        return same_reason;
    }
    let starting = exercise.starting_text();
    // When the starting failure is one statement racing with itself, a statement the learner
    // wrote (not one the file started with) that indexes an element it did is that statement
    // rewritten: split into a read into a register and a write, say. One the file already had
    // is another statement; and where the start named two statements, a new statement on one
    // of their elements is a new race (an atomic rewritten as a plain update).
    let starting_named = starting_statements(exercise);
    let one_statement = starting_named
        .iter()
        .all(|then| Some(then) == starting_named.first());
    let statements_then: std::collections::HashSet<String> = statements(&starting).collect();
    let written_now = |now: &str| !statements_then.contains(now);
    let same = |now: &str, then: &str| {
        now == then
            || updated(now).is_some_and(|target| updated(then) == Some(target))
            || (one_statement && written_now(now) && shares_element(now, then))
            // A store the learner rewrote (`row[x] = next;` after a barrier, for the starting
            // `row[x] = alive == 3 || …;`) is still the store the file started with.
            || (written_now(now) && stored(now).is_some_and(|target| stored(then) == Some(target)))
            // Its value computed first into a register (`unsigned char next = alive == 3 || …;`,
            // then a barrier, then the store) is still that statement's read.
            || (written_now(now) && stored(then).is_some() && carries_value_of(now, then))
            // …and the store of that register, wherever it stores (`board[y * width + x] =
            // next;` for the starting `row[x] = …;`): the value is the starting store's.
            || (written_now(now)
                && stored(now).is_some()
                && stored_value_carries(now, then, source))
    };
    // The stated statement, wherever the learner's edits moved it…
    let stated = statement(&starting, line);
    let at_stated = named.contains(&line)
        || stated.as_deref().is_some_and(|stated| {
            named
                .iter()
                .any(|&at| statement(source, at).is_some_and(|now| same(&now, stated)))
        });
    // …and nothing else: a race of the stated line with a line the starting file's race does
    // not name (a barrier taken out above it) is the learner's own.
    if !same_reason {
        // The other form of an index slip: at the stated statement and nowhere else.
        return named.iter().all(|&at| {
            at == line
                || statement(source, at)
                    .is_some_and(|now| stated.as_deref().is_some_and(|stated| same(&now, stated)))
        });
    }
    let within_start = named.iter().all(|&at| {
        at == line
            || statement(source, at)
                .is_some_and(|now| starting_named.iter().any(|then| same(&now, then)))
    });
    // A failure of only some of the starting failure's statements is the starting one too: a
    // barrier the learner put between two of its lines can leave one of its races (tiled's As
    // write against the sum's read, once Bs's is ordered), wherever the edit moved them.
    within_start && (at_stated || !starting_named.is_empty())
}

/// The statements the starting file's own failure names, for its reason: checked once per
/// exercise and kept (on the emulator, as the dev check holds the track to it).
fn starting_statements(exercise: &Exercise) -> Vec<String> {
    use std::collections::HashMap;
    use std::sync::{Mutex, OnceLock};
    static KEPT: OnceLock<Mutex<HashMap<&'static str, Vec<String>>>> = OnceLock::new();
    let kept = KEPT.get_or_init(Default::default);
    if let Some(found) = kept
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .get(exercise.name)
    {
        return found.clone();
    }
    let starting = exercise.starting_text();
    let options = crate::check::Options {
        backend: harness::BackendChoice::Emu,
    };
    let report = crate::check::check_source(exercise, &starting, options);
    let found: Vec<String> = match &report.outcome {
        Err(failure) => failure
            .lines_for(exercise.fails.reason, &report.path)
            .into_iter()
            .filter_map(|at| statement(&starting, at))
            .collect(),
        Ok(_) => Vec::new(),
    };
    kept.lock()
        .unwrap_or_else(|e| e.into_inner())
        .insert(exercise.name, found.clone());
    found
}

/// What a statement that updates a variable updates, spaces dropped: `x[0]` for `x[0]++;`,
/// `x[0] += 1;` and `x[0] = x[0] + 1;` alike, so that a learner who rewrote the statement still
/// meets the failure it started with. `None` for anything else.
fn updated(statement: &str) -> Option<String> {
    let text = without_spaces(statement);
    let text = text.strip_suffix(';').unwrap_or(&text);
    let target = if let Some(target) = text.strip_suffix("++").or(text.strip_suffix("--")) {
        target
    } else if let Some(target) = text.strip_prefix("++").or(text.strip_prefix("--")) {
        target
    } else {
        let at = text.find('=')?;
        let (target, rest) = text.split_at(at);
        if rest.starts_with("==") {
            return None;
        }
        match target.strip_suffix(['+', '-', '*', '/', '|', '&', '^']) {
            Some(compound) => compound,
            // `x[0] = x[0] + 1` updates x[0]; `s[tid] = sum` only stores to it
            None if rest[1..].contains(target) => target,
            None => return None,
        }
    };
    let name = |c: char| c.is_ascii_alphanumeric() || "_[]().->*".contains(c);
    (!target.is_empty() && target.chars().all(name)).then(|| target.to_string())
}

/// The element a plain assignment stores to, spaces dropped: `row[x]` for `row[x] = next;`.
/// `None` for anything else, a local variable's declaration or assignment among them.
fn stored(statement: &str) -> Option<String> {
    let mut text = without_spaces(statement);
    // `if (inside) row[x] = next;` stores to row[x] too.
    if let Some(condition) = text.strip_prefix("if(") {
        let mut depth = 1;
        let close = condition.find(|c| {
            depth += match c {
                '(' => 1,
                ')' => -1,
                _ => 0,
            };
            depth == 0
        })?;
        text = condition[close + 1..].to_string();
    }
    let at = text.find('=')?;
    let (target, rest) = text.split_at(at);
    let compound = target.ends_with(['+', '-', '*', '/', '|', '&', '^', '%', '<', '>', '!']);
    if rest.starts_with("==") || compound || !target.ends_with(']') {
        return None;
    }
    let name = |c: char| c.is_ascii_alphanumeric() || "_[]().->*+".contains(c);
    target.chars().all(name).then(|| target.to_string())
}

/// The value an assignment gives, spaces dropped and its `;` off: `alive==3||…` for
/// `row[x] = alive == 3 || …;`. `None` without an `=`.
fn assigned_value(statement: &str) -> Option<String> {
    let text = without_spaces(statement);
    let at = text.find('=')?;
    Some(text[at + 1..].trim_end_matches(';').to_string())
}

/// Whether `now` computes the whole value that the store `then` stores, spaces dropped: the
/// learner moved the store's right-hand side into a statement of its own.
fn carries_value_of(now: &str, then: &str) -> bool {
    let Some(value) = assigned_value(then) else {
        return false;
    };
    // A bare name or constant (`row[x] = next;`) says nothing of which computation it was.
    let computes = value.chars().any(|c| "+-*/|&^?<>!=(".contains(c));
    computes && without_spaces(now).contains(&value)
}

/// Whether the store `now` stores a plain variable that a statement of `source` computes as the
/// starting store `then` computed its value (see [`carries_value_of`]).
fn stored_value_carries(now: &str, then: &str, source: &str) -> bool {
    if stored(then).is_none() {
        return false;
    }
    let Some(value) = assigned_value(now) else {
        return false;
    };
    let is_name = !value.is_empty()
        && value.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !value.starts_with(|c: char| c.is_ascii_digit());
    is_name
        && statements(source).any(|other| {
            let assigns = other
                .split('=')
                .next()
                .and_then(|target| target.split_whitespace().last())
                == Some(value.as_str());
            assigns && carries_value_of(&other, then)
        })
}

/// The elements a statement indexes, spaces dropped: `sum_buf[tid-iter]` and `sum_buf[tid]` in
/// `sum_buf[tid] += sum_buf[tid - iter];`, `As[ty][k]` whole.
fn indexed_elements(statement: &str) -> Vec<String> {
    let text: Vec<char> = statement.chars().filter(|c| !c.is_whitespace()).collect();
    let mut found = Vec::new();
    let mut i = 0;
    while i < text.len() {
        if text[i] != '[' || i == 0 || !(text[i - 1].is_ascii_alphanumeric() || text[i - 1] == '_')
        {
            i += 1;
            continue;
        }
        let start = (0..i)
            .rev()
            .take_while(|&k| text[k].is_ascii_alphanumeric() || text[k] == '_')
            .last()
            .unwrap_or(i);
        // Through this subscript and any that follow it (`As[ty][k]`).
        let mut end = i;
        while end < text.len() && text[end] == '[' {
            let mut depth = 0;
            while end < text.len() {
                match text[end] {
                    '[' => depth += 1,
                    ']' => depth -= 1,
                    _ => {}
                }
                end += 1;
                if depth == 0 {
                    break;
                }
            }
        }
        found.push(text[start..end].iter().collect());
        i = end;
    }
    found
}

/// Whether two statements index one element alike: a learner who split `x[i] += x[i - s];` into
/// a read into a register and a write still has the race the file started with.
fn shares_element(now: &str, then: &str) -> bool {
    let then = indexed_elements(then);
    indexed_elements(now)
        .iter()
        .any(|element| then.contains(element))
}

/// Every statement of `text`, as [`statement`] reads it at each of its lines.
fn statements(text: &str) -> impl Iterator<Item = String> + '_ {
    (1..=text.lines().count() as u32).filter_map(|line| statement(text, line))
}

/// The statement at line `line` of `text`, its lines trimmed and joined by one space (a sum
/// written over three lines is one statement, whichever of its lines a checker names); `None`
/// when the line is blank or a lone brace, which say nothing of which statement it is.
fn statement(text: &str, line: u32) -> Option<String> {
    let lines: Vec<&str> = text.lines().map(str::trim).collect();
    let at = (line as usize).checked_sub(1)?;
    let trimmed = *lines.get(at)?;
    if trimmed.is_empty() || trimmed == "{" || trimmed == "}" {
        return None;
    }
    // A line ends a statement, or opens or closes a block, when it ends in one of these.
    let ends = |code: &str| {
        let code = code.split("//").next().unwrap_or_default().trim_end();
        code.is_empty() || code.ends_with([';', '{', '}']) || code.starts_with('#')
    };
    let mut first = at;
    while first > 0 && !ends(lines[first - 1]) {
        first -= 1;
    }
    let mut last = at;
    while !ends(lines[last]) && last + 1 < lines.len() {
        last += 1;
    }
    Some(lines[first..=last].join(" "))
}

/// Step `step` of the hints for `report` on `exercise`, as lines for the screen.
pub fn step_lines(exercise: &Exercise, report: &Report, step: Step) -> Vec<String> {
    let failure = match &report.outcome {
        Ok(_) => {
            return vec![format!(
                "{} passes: no hint needed (`cargo learn` moves on to the next exercise)",
                exercise.name
            )];
        }
        Err(failure) => failure,
    };
    let mut lines = Vec::new();
    // A lone read of memory nothing wrote, with the result still right, is no exercise's
    // stated failure; its hints are those of the unwritten read behind a wrong result.
    let reason = failure
        .reason()
        .or_else(|| reads_unwritten(failure).then_some(Reason::Check(Expect::Correct)));
    let Some(reason) = reason else {
        // Not the kernel's fault (no NVRTC, a device that does not open) or no run at all (the
        // kernel the host launches is missing): what the check said is where to look.
        let kernel = matches!(failure, Failure::Kernel(_));
        match step {
            Step::WhatIsWrong if kernel => lines.extend(paragraph(
                "The host launches the kernel by its name, with the parameters the host passes, \
                 in the host's order and with the host's types: a kernel of another name, or \
                 with other parameters, is not the one it launches.",
            )),
            Step::WhatToChange if kernel => {
                lines.extend(paragraph(
                    "Declare the kernel as the host launches it, the declaration the report \
                     quotes, with its name and parameters as they are there; then write its \
                     body.",
                ));
                lines.extend(last_hint(exercise));
            }
            Step::WhatToChange => {
                lines.extend(failure_lines(failure, &report.source));
                lines.extend(last_hint(exercise));
            }
            _ => lines.extend(failure_lines(failure, &report.source)),
        }
        return lines;
    };
    let starting = is_starting_failure(exercise, failure, &report.path, &report.source);
    // A file written from a TODO has no starting bug of its own, and a file that started as a
    // compile error has its exercise past the error: in both, the exercise's hints are about
    // what the learner is doing now.
    let write_it = matches!(exercise.start, crate::exercise::Start::Write { .. });
    let compiles_now = exercise.fails.reason == Reason::Check(Expect::CompileError)
        && reason != Reason::Check(Expect::CompileError);
    // What the learner has already done of the fix (a lock taken with atomicCAS) is not hinted
    // at again: the part-fixed hints speak of what is left.
    let hints = exercise
        .part_fixed
        .iter()
        .find(|part| part.holds(&report.source))
        .map_or(exercise.hints, |part| part.hints);
    let own_hints = hints.len() > 1 && (write_it || compiles_now);
    match step {
        Step::WhereToLook => {
            lines.extend(paragraph(&format!(
                "Your file as it is now fails with {}:",
                reason_phrase(reason)
            )));
            let mut shown = where_lines(failure, &report.source, reason);
            let left_out = shown.len().saturating_sub(WHERE_LINES);
            shown.truncate(WHERE_LINES);
            lines.extend(shown.into_iter().map(|line| format!("  {line}")));
            if left_out > 0 {
                let s = if left_out == 1 { "" } else { "s" };
                lines.push(format!(
                    "  … {left_out} more line{s}: `cargo learn check {} --all` shows it whole",
                    exercise.name
                ));
            }
            // A second kind of failure (a barrier the learner put inside a loop, beside the
            // race the file started with) is named here, or these hints would hide it.
            for (other, at) in other_failures(failure, reason, &report.path) {
                lines.extend(paragraph(&format!(
                    "It also fails with {} at {} (the check's report has it; `cargo learn check \
                     {} --all` shows every finding), and the last hint says what to change for \
                     it too.",
                    reason_phrase(other),
                    line_list(&at),
                    exercise.name
                )));
            }
        }
        Step::WhatIsWrong if own_hints && !starting => {
            lines.extend(paragraph(&what_is_wrong(reason, failure, &report.source)));
            if compiles_now {
                lines.extend(paragraph(
                    "The file compiles now, so the exercise's next step is yours: the kernel \
                     the host launches.",
                ));
            }
            let authored = &hints[usize::from(compiles_now)..hints.len() - 1];
            for hint in authored {
                lines.extend(paragraph(hint));
            }
        }
        Step::WhatIsWrong => {
            if starting {
                let authored = hints.len().saturating_sub(1).max(1);
                for hint in &hints[..authored.min(hints.len())] {
                    lines.extend(paragraph(hint));
                }
                // The checkers fell silent but the count is still wrong (the slip's other
                // face): say why they are silent, or the learner takes silence for a fix.
                if reason != exercise.fails.reason && reason == Reason::Check(Expect::WrongResult) {
                    lines.extend(paragraph(&what_is_wrong(reason, failure, &report.source)));
                }
            } else {
                let news = if reason == exercise.fails.reason {
                    format!(
                        "This is not how the file started: it had {} too, but not this one, \
                         which involves lines the starting file's did not; your change brought \
                         it.",
                        reason_phrase(reason)
                    )
                } else {
                    format!(
                        "This is not how the file started ({}): your change brought {}.",
                        reason_phrase(exercise.fails.reason),
                        reason_phrase(reason)
                    )
                };
                lines.extend(paragraph(&news));
                lines.extend(paragraph(&what_is_wrong(reason, failure, &report.source)));
            }
        }
        Step::WhatToChange => {
            match hints.last() {
                Some(hint) if starting && hints.len() > 1 => lines.extend(paragraph(hint)),
                // The current failure's fix, then the exercise's own last step toward what
                // its statement asks (which may rule some of those fixes out).
                Some(hint) if own_hints => {
                    lines.extend(paragraph(&what_to_change(reason, failure)));
                    lines.extend(paragraph(hint));
                }
                _ => lines.extend(paragraph(&what_to_change(reason, failure))),
            }
            for (other, at) in other_failures(failure, reason, &report.path) {
                let change = what_to_change(other, failure);
                let mut chars = change.chars();
                let change = chars
                    .next()
                    .map(|first| first.to_lowercase().chain(chars).collect::<String>())
                    .unwrap_or_default();
                lines.extend(paragraph(&format!(
                    "For {} at {} too: {change}",
                    reason_phrase(other),
                    line_list(&at),
                )));
            }
            lines.extend(last_hint(exercise));
        }
    }
    lines
}

/// The failure's reasons besides `shown` that name lines (a barrier divergence beside a race),
/// each with its lines: what the hints about `shown` would otherwise leave unsaid.
fn other_failures(failure: &Failure, shown: Reason, path: &str) -> Vec<(Reason, Vec<u32>)> {
    failure
        .reasons()
        .into_iter()
        // A wrong result (an unwritten read among its causes) is what the other failures do to
        // the output, not a second thing to fix.
        .filter(|&other| other != shown && other != Reason::Check(Expect::WrongResult))
        .map(|other| (other, failure.lines_for(other, path)))
        .filter(|(_, at)| !at.is_empty())
        .collect()
}

/// `line 29`, `lines 12 and 29`, `lines 3, 12 and 29`.
fn line_list(lines: &[u32]) -> String {
    let numbers: Vec<String> = lines.iter().map(u32::to_string).collect();
    match numbers.as_slice() {
        [one] => format!("line {one}"),
        [init @ .., last] => format!("lines {} and {last}", init.join(", ")),
        [] => String::new(),
    }
}

/// The line under the last hint: where the answer is, not what it is.
fn last_hint(exercise: &Exercise) -> Vec<String> {
    paragraph(&format!(
        "That is the last hint. `cargo learn solution {}` shows the chapter's kernel that \
         solves it.",
        exercise.name
    ))
}

/// How the learner asks for the next hint: `cargo learn hint NAME`, or the watch screen's key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Asked {
    Command,
    Key,
}

/// Hint `shown` (1-based) of [`Step::ALL`] for `report`, under a line that says which; past the
/// last, every hint in order, so that the first two can be read again.
pub fn hint_lines(exercise: &Exercise, report: &Report, shown: usize, asked: Asked) -> Vec<String> {
    if shown > Step::ALL.len() && !report.passed() {
        let mut lines = Vec::new();
        for (index, step) in Step::ALL.into_iter().enumerate() {
            lines.push(hint_title(exercise, index + 1, step));
            lines.extend(step_lines(exercise, report, step));
        }
        return fit(lines);
    }
    let step = Step::ALL[shown.clamp(1, Step::ALL.len()) - 1];
    if report.passed() {
        return fit(step_lines(exercise, report, step));
    }
    let mut lines = vec![hint_title(exercise, shown, step)];
    lines.extend(step_lines(exercise, report, step));
    if let Some(next) = Step::ALL.get(shown) {
        let again = match asked {
            Asked::Command => format!("`cargo learn hint {}`", exercise.name),
            Asked::Key => "h".to_string(),
        };
        lines.push(format!("  ({again} again: {})", next.title()));
    }
    fit(lines)
}

/// `hint 2 of 3 for NAME, what is wrong:`
fn hint_title(exercise: &Exercise, shown: usize, step: Step) -> String {
    format!(
        "hint {shown} of {} for {}, {}:",
        Step::ALL.len(),
        exercise.name,
        step.title()
    )
}

/// The current failure as the report shows it, cut to what points at the code: the first
/// finding of the `reason` the hint names (the first finding, when none gives it) with its lines
/// and threads, the wrong value and its smallest case, NVRTC's first errors.
fn where_lines(failure: &Failure, source: &str, reason: Reason) -> Vec<String> {
    let mut lines = failure_lines(failure, source);
    if let Failure::Case(case) = failure
        && case.findings.len() > 1
    {
        // One finding: the report's "… and N more" would point nowhere here.
        let gives_reason = |finding: &&harness::Finding| {
            crate::check::finding_reason(finding, case) == Some(reason)
        };
        let mut shown = case
            .findings
            .iter()
            .find(gives_reason)
            .unwrap_or(&case.findings[0]);
        // A finding of no exercise's reason that the report puts first, at the same lines
        // (the warp-sync error that explains a shuffle's deadlock), says more: show it.
        let first = &case.findings[0];
        if matches!(first.kind, FindingKind::WarpSync { .. })
            && first
                .lines()
                .iter()
                .any(|line| shown.lines().contains(line))
        {
            shown = first;
        }
        let mut only_one = (**case).clone();
        only_one.findings = vec![shown.clone()];
        lines = failure_lines(&Failure::Case(Box::new(only_one)), source);
    }
    lines
        .into_iter()
        .map(|line| line.trim_start_matches("✗ ").to_string())
        .collect()
}

fn paragraph(text: &str) -> Vec<String> {
    wrap(text, WIDTH - 2)
        .into_iter()
        .map(|line| format!("  {line}"))
        .collect()
}

fn reason_phrase(reason: Reason) -> &'static str {
    match reason {
        Reason::Check(Expect::Race) => "a race",
        Reason::Check(Expect::BarrierDivergence) => "barrier divergence",
        Reason::Check(Expect::OutOfBounds) => "an access out of bounds",
        Reason::Check(Expect::Deadlock) => "threads that never finish",
        Reason::Check(Expect::CompileError) => "a compile error",
        Reason::Check(Expect::WrongResult) => "a wrong result",
        // A lone read of memory nothing wrote, the result still right (see `step_lines`).
        Reason::Check(Expect::Correct) => "a read of memory nothing wrote",
        Reason::BankConflicts => "bank conflicts",
        Reason::TooSlow => "a kernel slower than the goal",
    }
}

/// How a kernel that never finishes hangs, as its first such finding tells.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Hang {
    /// Lanes wait in a `__syncwarp()`, shuffle or vote for lanes that never come.
    WarpSync,
    /// Threads wait at a `__syncthreads()` others never reach.
    Barrier,
    /// A loop whose exit never comes (the step budget ran out).
    Runaway,
    /// Threads spin on a lock or a flag that never changes.
    Spin,
}

/// Whether initcheck found a read of memory nothing wrote in the failing case.
fn reads_unwritten(failure: &Failure) -> bool {
    matches!(failure, Failure::Case(case) if case
        .findings
        .iter()
        .any(|f| matches!(f.kind, FindingKind::UninitializedRead { .. })))
}

fn hang_of(failure: &Failure) -> Hang {
    let Failure::Case(case) = failure else {
        return Hang::Spin;
    };
    for finding in &case.findings {
        match finding.kind {
            FindingKind::StepBudgetExhausted => return Hang::Runaway,
            FindingKind::Stuck => return Hang::Spin,
            FindingKind::Deadlock => {
                let in_warp_sync = finding.threads.iter().any(|group| {
                    group.state.starts_with("wait in ") || group.state.contains("warp-synchronous")
                });
                return if in_warp_sync {
                    Hang::WarpSync
                } else {
                    Hang::Barrier
                };
            }
            _ => {}
        }
    }
    Hang::Spin
}

/// The two sides of the failure's first race: whether they are threads of different blocks,
/// and whether they ran the same line.
/// Whether the race is between two kernels (on two devices or streams), not two threads of one.
fn race_between_kernels(failure: &Failure) -> bool {
    matches!(failure, Failure::Case(case)
        if !case.findings.iter().any(|f| matches!(f.kind, FindingKind::Race { .. }))
            && case.findings.iter().any(|f| matches!(f.kind, FindingKind::StreamRace { .. })))
}

fn race_sides(failure: &Failure) -> Option<(bool, bool)> {
    let Failure::Case(case) = failure else {
        return None;
    };
    let race = case
        .findings
        .iter()
        .find(|finding| matches!(finding.kind, FindingKind::Race { .. }))?;
    let [first, second] = race.accesses.get(..2)? else {
        return None;
    };
    Some((
        first.thread.block != second.thread.block,
        first.at.line == second.at.line,
    ))
}

fn what_is_wrong(reason: Reason, failure: &Failure, source: &str) -> String {
    if reason == Reason::Check(Expect::Race) && race_between_kernels(failure) {
        return "Two launches that may run at the same time, on two devices or two streams, \
                touch the same bytes, and at least one writes them: no barrier, atomic or \
                fence inside a kernel orders them. The report names the buffer and the \
                element; ask which launch was meant to touch it in this step."
            .into();
    }
    let mut text = what_is_wrong_in_general(reason, failure).to_string();
    let atomics = source.matches("atomic").count();
    if matches!(reason, Reason::Check(Expect::WrongResult | Expect::Correct))
        && !reads_unwritten(failure)
        && atomics >= 2
    {
        text.push_str(
            " Atomics never race with each other, so the checkers stay silent for two atomics \
             in a row too, but an atomic read and then an atomic write of the same place are \
             not one update: another thread's update can fall between them and be lost.",
        );
    }
    if reason == Reason::Check(Expect::Race) {
        match race_sides(failure) {
            Some((true, _)) => text.push_str(
                " The two threads are in different blocks: a __syncthreads() waits only for \
                 its own block, so no barrier can order them.",
            ),
            Some((false, true)) => text.push_str(
                " Both ran the same line: a barrier orders what comes before it against what \
                 comes after it; it does not order two threads running the same statement.",
            ),
            _ => {}
        }
    }
    text
}

fn what_is_wrong_in_general(reason: Reason, failure: &Failure) -> &'static str {
    match reason {
        Reason::Check(Expect::Deadlock) => match hang_of(failure) {
            Hang::WarpSync => {
                "Lanes of a warp wait in a __syncwarp() (or a shuffle or vote) for lanes that \
                 its mask names and that never get there: those lanes took another path, an \
                 if or a loop, or exited."
            }
            Hang::Barrier => {
                "Threads wait at a __syncthreads() that other threads of their block never \
                 reach, or reach at another one: each waits for the other for ever."
            }
            Hang::Runaway => {
                "A loop never ends for some thread: its exit condition never becomes true, as \
                 when a counter moves away from its bound, or a bound is wrong for some thread."
            }
            Hang::Spin => {
                "Threads wait for something that never happens: a lock or a flag that the \
                 thread meant to release it cannot reach, often one of the same warp, or a \
                 loop whose exit depends on another thread."
            }
        },
        Reason::Check(Expect::Race) => {
            "Two threads access the same address, at least one of them writes, and nothing \
             orders the two accesses: no __syncthreads() between them that both threads pass, \
             no atomic, no fence and flag. Which value each thread sees then depends on timing."
        }
        Reason::Check(Expect::BarrierDivergence) => {
            "Every thread of a block must reach the same __syncthreads(), or none may: a \
             barrier inside an if, a loop or after a return that only some threads take \
             leaves the others waiting at another barrier, or at none."
        }
        Reason::Check(Expect::OutOfBounds) => {
            "For some thread, some size or some block shape, an index goes past the end of \
             its array (or before its start). The smallest failing case shows which \
             sizes and which thread."
        }
        Reason::Check(Expect::CompileError) => {
            "NVRTC refuses the file. Its first error is usually the real one: the rest often \
             follow from it."
        }
        Reason::Check(Expect::WrongResult | Expect::Correct) if reads_unwritten(failure) => {
            "A thread reads memory that no thread wrote (initcheck names where), so what it \
             computes from it is garbage: an element no thread writes, or a read that comes \
             before the write it needs."
        }
        Reason::Check(Expect::WrongResult | Expect::Correct) => {
            "The checkers are silent, yet the kernel computes another value than the CPU. \
             Threads of one block that write the same value to one place are not reported, so \
             threads can still collide: many that read a value, then write what they computed \
             from it, lose each other's updates. Other common causes: an element no thread \
             handles, one handled twice, an index or a bound off by one, a value read before \
             it was written."
        }
        Reason::BankConflicts => {
            "The result is right, but threads of one warp hit different words of the same \
             shared-memory bank in one access, so the hardware splits it into passes."
        }
        Reason::TooSlow => {
            "The result is right, but the kernel is slower on the GPU than the one the \
             exercise asks you to beat."
        }
    }
}

fn what_to_change(reason: Reason, failure: &Failure) -> String {
    if reason == Reason::Check(Expect::Race) && race_between_kernels(failure) {
        return "Make each launch touch only the part that is its own in this step: the bounds \
                of its loop (where it starts and where it stops) decide which elements it reads \
                and writes, so that no other launch running beside it touches them."
            .into();
    }
    if reason == Reason::Check(Expect::Race) {
        return match race_sides(failure) {
            Some((true, _)) => "Threads of different blocks are ordered only by atomics and \
                fences: make the update one atomic operation (atomicAdd, atomicExch), or write \
                the data, __threadfence(), then set a flag, and on the other side read the flag, \
                __threadfence(), then the data. Or split the work into two launches."
                .into(),
            Some((false, true)) => "Make the update one atomic operation (atomicAdd) when many \
                threads add to the same place, or give each thread an element of its own and \
                combine them after a __syncthreads(). When the statement runs in steps, each \
                reading what the step before wrote (a tree's levels), put a __syncthreads() \
                after every step, inside the loop and outside any if."
                .into(),
            _ => what_to_change_in_general(reason, failure).into(),
        };
    }
    what_to_change_in_general(reason, failure).to_string()
}

fn what_to_change_in_general(reason: Reason, failure: &Failure) -> &'static str {
    match reason {
        Reason::Check(Expect::Deadlock) => match hang_of(failure) {
            Hang::WarpSync => {
                "Make every lane that the mask names reach the __syncwarp(), shuffle or vote \
                 that waits for it: call it outside the if, with every lane's mask, and let the \
                 if choose what to do with the value. A narrower mask is right only when no \
                 lane it leaves out is read: a shuffle from a lane outside its mask reads \
                 nothing defined."
            }
            Hang::Barrier => {
                "Put the __syncthreads() where every thread of the block reaches it the same \
                 number of times: outside the if, and outside loops whose trip count differs \
                 from thread to thread."
            }
            Hang::Runaway => {
                "Take the smallest failing case and the loop the report names, and check that \
                 each time round every thread's condition moves toward its exit."
            }
            Hang::Spin => {
                "Make sure the thread that releases can always run: one thread per warp takes \
                 the lock, or the waiting loop also does the work it waits for."
            }
        },
        Reason::Check(Expect::Race) => {
            "Put a __syncthreads() between the two accesses the report names, where every \
             thread of the block reaches it (outside any if). When they are in a loop, the \
             later line may race with the next time round's earlier one: then a barrier also \
             goes at the end of the loop's body. (An atomic would keep each access whole, but \
             would not order a read after the write it needs.)"
        }
        Reason::Check(Expect::BarrierDivergence) => {
            "Every thread of the block must reach the __syncthreads(): move it out of the \
             branch, and return only after the last barrier (or leave a loop that holds one \
             only where every thread leaves it: no break or continue that some threads take). \
             Let the threads with no work skip the work, not the barrier."
        }
        Reason::Check(Expect::OutOfBounds) => {
            "Work out, for the smallest failing case, which index goes past the end. If the \
             index itself is off (one too many, a wrong offset), fix it; if the array is too \
             small for the indices the code needs, declare it larger; if the thread has no \
             element there, guard the access with the array's bound (if (i < n)) or stop the \
             loop at it, and keep any __syncthreads() outside the guard."
        }
        Reason::Check(Expect::CompileError) => {
            "Fix the first error NVRTC names, at its line, and save again."
        }
        Reason::Check(Expect::WrongResult | Expect::Correct) if reads_unwritten(failure) => {
            "Make sure every element is written before any thread reads it: the missing \
             writes (which thread should write the element initcheck names?), or a \
             __syncthreads() between the writes and the reads."
        }
        Reason::Check(Expect::WrongResult | Expect::Correct) => {
            "Work the smallest failing case by hand through your kernel, thread by thread, \
             and fix the first value that differs from the CPU's."
        }
        Reason::BankConflicts => {
            "Make the lanes of a warp read words in different banks: pad a shared array's row \
             by one element, or change which lane reads which word."
        }
        Reason::TooSlow => {
            "Do less per element than the rival: fewer global accesses, fewer atomics on one \
             address, more work per thread."
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{indexed_elements, shares_element, stored, updated};

    #[test]
    fn an_update_is_known_by_what_it_updates_however_it_is_written() {
        for written in [
            "x[0]++;",
            "++x[0];",
            "x[0] += 1;",
            "x[0] = x[0] + 1;",
            "x [0]=x[0]+1",
        ] {
            assert_eq!(updated(written).as_deref(), Some("x[0]"), "{written}");
        }
        assert_eq!(updated("*total += s;").as_deref(), Some("*total"));
        assert_eq!(updated("s->count -= 2;").as_deref(), Some("s->count"));
    }

    #[test]
    fn a_statement_split_in_two_still_indexes_the_elements_it_did() {
        let then = "sum_buf[tid] += sum_buf[tid - iter];";
        assert!(shares_element(
            "unsigned int v = sum_buf[tid - iter];",
            then
        ));
        assert!(shares_element("sum_buf[ tid ] = v;", then));
        assert!(!shares_element("sum_buf[tid + 1] = v;", then));
        assert_eq!(
            indexed_elements("sum += As[ty][k] * Bs[k][tx];"),
            ["As[ty][k]", "Bs[k][tx]"]
        );
        assert!(!shares_element("int v = 0;", then));
    }

    #[test]
    fn a_store_is_known_by_the_element_it_stores_to() {
        assert_eq!(stored("row[x] = next;").as_deref(), Some("row[x]"));
        assert_eq!(
            stored("row[x] = alive == 3 || (row[x] && alive == 2);").as_deref(),
            Some("row[x]")
        );
        assert_eq!(stored("unsigned char next = alive == 3;"), None);
        assert_eq!(stored("x[i] += 1;"), None);
        assert_eq!(stored("if (a[i] == b) return;"), None);
        assert_eq!(
            stored("if (inside && (y < h)) row[x] = next;").as_deref(),
            Some("row[x]")
        );
    }

    #[test]
    fn what_updates_nothing_has_no_target() {
        for written in [
            "if (x == 1) {",
            "return;",
            "a <= b;",
            "x != 1;",
            "__syncthreads();",
            // a store is not an update: it reads nothing of what it writes
            "s_block[tid] = sum;",
        ] {
            assert_eq!(updated(written), None, "{written}");
        }
    }
}
