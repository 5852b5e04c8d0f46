//! Hints follow the learner: for every exercise, a plausible wrong attempt (the solution with
//! one mistake a learner makes: a barrier left out, an atomic written as `+=`, a bound off by
//! one) and the three hints it gets, in snapshots. The first hint must speak of the attempt's
//! own failure and line, not of the bug the file started with, and no hint may show where the
//! solution is.

mod common;

use harness::testing::require_nvrtc;
use learn::exercise::learner_view;
use learn::hint::{Asked, Step, hint_lines, is_starting_failure, subject};
use learn::{Exercise, Report, Start, check_source, track};

/// A mistake, made in the solution's text: `None` when the text has nowhere to make it.
struct Mistake {
    what: &'static str,
    make: fn(&str) -> Option<(String, u32)>,
}

/// Line numbers are 1-based, as the checkers give them.
fn replace_line(text: &str, index: usize, new: Option<String>) -> String {
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    match new {
        Some(line) => lines[index] = line,
        None => {
            lines[index] = String::new();
        }
    }
    lines.join("\n") + "\n"
}

fn without_first_barrier(text: &str) -> Option<(String, u32)> {
    let index = text
        .lines()
        .position(|line| line.trim() == "__syncthreads();")?;
    Some((replace_line(text, index, None), index as u32 + 1))
}

fn without_last_barrier(text: &str) -> Option<(String, u32)> {
    let lines: Vec<&str> = text.lines().collect();
    let index = lines
        .iter()
        .rposition(|line| line.trim() == "__syncthreads();")?;
    Some((replace_line(text, index, None), index as u32 + 1))
}

/// `atomicAdd(&x[i], v);` as `x[i] += v;`, on a line that is only that call.
fn atomic_as_plus_equals(text: &str) -> Option<(String, u32)> {
    let (index, line) = text.lines().enumerate().find(|(_, line)| {
        let code = line.trim();
        code.starts_with("atomicAdd(&") && code.ends_with(");")
    })?;
    let indent = &line[..line.len() - line.trim_start().len()];
    let inner = line
        .trim()
        .strip_prefix("atomicAdd(&")?
        .strip_suffix(");")?;
    // The last top-level comma splits the address from the value.
    let mut depth = 0;
    let mut split = None;
    for (at, c) in inner.char_indices() {
        match c {
            '(' | '[' => depth += 1,
            ')' | ']' => depth -= 1,
            ',' if depth == 0 => split = Some(at),
            _ => {}
        }
    }
    let at = split?;
    let (address, value) = (inner[..at].trim(), inner[at + 1..].trim());
    Some((
        replace_line(text, index, Some(format!("{indent}{address} += {value};"))),
        index as u32 + 1,
    ))
}

/// Whether `line` is code with `needle` in a condition (an `if`, a loop's).
fn is_condition_with(line: &str, needle: &str) -> bool {
    let code = line.trim_start();
    !code.starts_with("//")
        && line.contains(needle)
        && (code.starts_with("if (") || code.starts_with("for (") || code.ends_with(") {"))
}

/// The first condition with `needle`, `needle` replaced.
fn in_first_condition(text: &str, needle: &str, with: &str) -> Option<(String, u32)> {
    let (index, line) = text
        .lines()
        .enumerate()
        .find(|(_, line)| is_condition_with(line, needle))?;
    Some((
        replace_line(text, index, Some(line.replacen(needle, with, 1))),
        index as u32 + 1,
    ))
}

/// `i < n` as `i <= n`.
fn bound_off_by_one(text: &str) -> Option<(String, u32)> {
    in_first_condition(text, " < ", " <= ")
}

/// The last bound of the kernel (the guard of its store, often) off by one.
fn last_bound_off_by_one(text: &str) -> Option<(String, u32)> {
    let lines: Vec<&str> = text.lines().collect();
    let index = lines
        .iter()
        .rposition(|line| is_condition_with(line, " < "))?;
    Some((
        replace_line(text, index, Some(lines[index].replacen(" < ", " <= ", 1))),
        index as u32 + 1,
    ))
}

/// `right = (k + 1) * stride - 1;` without its `- 1`: an index one past.
fn index_without_minus_one(text: &str) -> Option<(String, u32)> {
    let (index, line) = text.lines().enumerate().find(|(_, line)| {
        !line.trim_start().starts_with("//") && line.contains(" = ") && line.ends_with(" - 1;")
    })?;
    let shorter = format!("{};", line.strip_suffix(" - 1;")?);
    Some((replace_line(text, index, Some(shorter)), index as u32 + 1))
}

/// `if (x >= width) return;` as `x > width`.
fn guard_off_by_one(text: &str) -> Option<(String, u32)> {
    in_first_condition(text, " >= ", " > ")
}

fn without_first_fence(text: &str) -> Option<(String, u32)> {
    let index = text
        .lines()
        .position(|line| line.trim() == "__threadfence();")?;
    Some((replace_line(text, index, None), index as u32 + 1))
}

const MISTAKES: &[Mistake] = &[
    Mistake {
        what: "the non-atomic update a learner writes first",
        make: atomic_as_plus_equals,
    },
    Mistake {
        what: "the first __syncthreads() left out",
        make: without_first_barrier,
    },
    Mistake {
        what: "the last __syncthreads() left out",
        make: without_last_barrier,
    },
    Mistake {
        what: "a bound off by one (< written <=)",
        make: bound_off_by_one,
    },
    Mistake {
        what: "a guard off by one (>= written >)",
        make: guard_off_by_one,
    },
    Mistake {
        what: "the first __threadfence() left out",
        make: without_first_fence,
    },
    Mistake {
        what: "the last bound off by one (< written <=)",
        make: last_bound_off_by_one,
    },
    Mistake {
        what: "an index off by one (its - 1 left out)",
        make: index_without_minus_one,
    },
];

/// The solution as the learner's file would hold it: under the file's header, as the starting
/// text is, so its lines are where the learner's would be.
fn solution_as_file(exercise: &Exercise) -> String {
    let keep_kernel_header = matches!(exercise.start, Start::Write { .. });
    exercise.header() + &learner_view(exercise.solution.source, keep_kernel_header)
}

/// The first mistake that makes the solution fail, with the attempt's report.
fn wrong_attempt(exercise: &Exercise) -> Option<(&'static str, String, u32, Report)> {
    let solution = solution_as_file(exercise);
    MISTAKES.iter().find_map(|mistake| {
        let (attempt, line) = (mistake.make)(&solution)?;
        let report = check_source(exercise, &attempt, common::emulator());
        (!report.passed()).then_some((mistake.what, attempt, line, report))
    })
}

fn all_hints(exercise: &Exercise, report: &Report) -> Vec<String> {
    (1..=Step::ALL.len())
        .flat_map(|shown| hint_lines(exercise, report, shown, Asked::Command))
        .collect()
}

/// Each of the three hints for `report`, as its own text.
fn each_hint(exercise: &Exercise, report: &Report) -> Vec<String> {
    (1..=Step::ALL.len())
        .map(|shown| hint_lines(exercise, report, shown, Asked::Command).join("\n"))
        .collect()
}

#[test]
fn every_exercise_gets_hints_about_a_wrong_attempt_of_its_own() {
    require_nvrtc();
    let mut screens = String::new();
    let mut problems = Vec::new();
    let mut without_attempt = Vec::new();
    for exercise in track() {
        let Some((what, attempt, line, report)) = wrong_attempt(exercise) else {
            without_attempt.push(exercise.name);
            continue;
        };
        let hints = all_hints(exercise, &report);
        let text = hints.join("\n");
        if text.contains(exercise.solution.path) || text.contains("kernels/") {
            problems.push(format!(
                "{}: a hint shows the solution's path",
                exercise.name
            ));
        }
        let Err(failure) = &report.outcome else {
            unreachable!("a wrong attempt fails")
        };
        let first = hint_lines(exercise, &report, 1, Asked::Command).join("\n");
        let named = failure.lines(&report.path);
        if !named.is_empty() && !named.iter().any(|l| first.contains(&format!("line {l}:"))) {
            problems.push(format!(
                "{}: hint 1 quotes none of the lines the attempt fails at ({named:?}):\n{first}",
                exercise.name
            ));
        }
        // A file written from a TODO, or one past the compile error it started with, is the
        // learner's own: its hints are the exercise's, not news of a change.
        let own = matches!(exercise.start, learn::Start::Write { .. })
            || (exercise.fails.reason == learn::Reason::Check(harness::Expect::CompileError)
                && failure.reason() != Some(exercise.fails.reason));
        if own && exercise.hints.len() > 1 {
            let second = hint_lines(exercise, &report, 2, Asked::Command).join("\n");
            let first_words = |hint: &str| {
                hint.split_whitespace()
                    .take(6)
                    .collect::<Vec<_>>()
                    .join(" ")
            };
            let flat = second.split_whitespace().collect::<Vec<_>>().join(" ");
            let authored = &exercise.hints[..exercise.hints.len() - 1];
            if second.contains("This is not how the file started")
                || !authored
                    .iter()
                    .any(|hint| flat.contains(&first_words(hint)))
            {
                problems.push(format!(
                    "{}: the learner's own file gets no hint of the exercise's:\n{second}",
                    exercise.name
                ));
            }
        } else if !is_starting_failure(exercise, failure, &report.path, &report.source) {
            let second = hint_lines(exercise, &report, 2, Asked::Command).join("\n");
            if !second.contains("This is not how the file started") {
                problems.push(format!(
                    "{}: the attempt fails another way than the start, but hint 2 is the start's:\n{second}",
                    exercise.name
                ));
            }
        }
        let solution = solution_as_file(exercise);
        let was = solution.lines().nth(line as usize - 1).unwrap_or_default();
        let now = attempt.lines().nth(line as usize - 1).unwrap_or_default();
        let change = if now.trim().is_empty() {
            format!("`{}` removed", was.trim())
        } else {
            format!("`{}` written `{}`", was.trim(), now.trim())
        };
        screens.push_str(&format!(
            "═══ {} · attempt: {what}, line {line}: {change}\n{text}\n\n",
            exercise.name
        ));
    }
    assert!(problems.is_empty(), "{}", problems.join("\n\n"));
    // Every exercise has a solution where one of the mistakes can be made; a new one that
    // does not needs a mistake of its own above.
    assert!(
        without_attempt.is_empty(),
        "no wrong attempt for {without_attempt:?}"
    );
    // Addresses are the emulator's allocator's business, not the hint's.
    insta::with_settings!({ filters => vec![(r"0x[0-9a-f]{6,}", "0x…")] }, {
        insta::assert_snapshot!("hints_for_wrong_attempts", screens);
    });
}

/// The issue's case: a reduction's barrier moved inside the `if`, in the exercise that started
/// without barriers. Hint 1 names the divergence at the moved line, not the starting race.
#[test]
fn a_barrier_moved_into_the_if_gets_hints_about_divergence() {
    require_nvrtc();
    let exercise = learn::find("tree-no-sync").expect("the tree without barriers");
    let solution = solution_as_file(exercise);
    let lines: Vec<&str> = solution.lines().collect();
    // The barrier in the tree's loop comes right after the `if` that adds a partner's value:
    // moved inside it, before its closing brace.
    let barrier = (1..lines.len())
        .find(|&index| lines[index].trim() == "__syncthreads();" && lines[index - 1].trim() == "}")
        .expect("the fixed reduction has a barrier after an if");
    let mut moved: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
    let barrier_line = moved.remove(barrier);
    let close = barrier - 1;
    moved.insert(close, format!("    {barrier_line}"));
    let attempt = moved.join("\n") + "\n";
    let report = check_source(exercise, &attempt, common::emulator());
    let first = hint_lines(exercise, &report, 1, Asked::Command).join("\n");
    assert!(
        first.contains("barrier divergence"),
        "hint 1 should name the divergence the attempt has:\n{first}\nattempt:\n{attempt}"
    );
    assert!(
        first.contains(&format!("line {}:", close + 1)),
        "hint 1 should quote the moved barrier, line {}:\n{first}",
        close + 1
    );
    let second = hint_lines(exercise, &report, 2, Asked::Command).join("\n");
    assert!(
        second.contains("This is not how the file started (a race)"),
        "{second}"
    );
    insta::assert_snapshot!(
        "barrier_moved_into_the_if",
        all_hints(exercise, &report).join("\n")
    );
}

/// The starting file's hints are the exercise's own, after the finding it shows.
#[test]
fn the_starting_file_gets_its_finding_then_the_exercise_hints() {
    require_nvrtc();
    let exercise = learn::find("racy-increment").expect("the first ch4 exercise");
    let report = check_source(exercise, &exercise.starting_text(), common::emulator());
    let first = hint_lines(exercise, &report, 1, Asked::Command).join("\n");
    let line = exercise.stated_line().expect("a race names its line");
    assert!(first.contains("a race"), "{first}");
    assert!(first.contains(&format!("line {line}:")), "{first}");
    let second = hint_lines(exercise, &report, 2, Asked::Command).join("\n");
    assert!(
        second.contains("read, add, write"),
        "hint 2 should be the exercise's own:\n{second}"
    );
    let third = hint_lines(exercise, &report, 3, Asked::Command).join("\n");
    assert!(third.contains("atomicAdd(&x[0], 1)"), "{third}");
    assert!(
        third.contains("cargo learn solution racy-increment"),
        "{third}"
    );
    assert!(!third.contains(exercise.solution.path), "{third}");
}

/// The learner's case from the issue: `x[0] = x[0] + 1;` wrapped in barriers moves the racy
/// statement a line down, and a learner may write it `x[0]++;` on the way. It is still the race
/// the file started with, so hints 2 and 3 are the exercise's own, not "another line".
#[test]
fn the_starting_race_moved_by_an_edit_keeps_the_exercises_hints() {
    require_nvrtc();
    let exercise = learn::find("racy-increment").expect("the first ch4 exercise");
    let start = exercise.starting_text();
    let racy = "x[0] = x[0] + 1;";
    for rewritten in [racy, "x[0]++;", "x[0] += 1;"] {
        let wrapped = start.replacen(
            racy,
            &format!("__syncthreads();\n    {rewritten}\n    __syncthreads();"),
            1,
        );
        assert_ne!(wrapped, start, "the starting file has `{racy}`");
        let report = check_source(exercise, &wrapped, common::emulator());
        let second = hint_lines(exercise, &report, 2, Asked::Command).join("\n");
        assert!(
            !second.contains("This is not how the file started"),
            "{rewritten}: {second}"
        );
        assert!(second.contains("read, add, write"), "{rewritten}: {second}");
    }
}

/// Kernels that never finish get the advice of how they hang: a loop whose exit never comes
/// is not told about locks, and a `__syncwarp()` only one lane reaches is told about its mask.
#[test]
fn hangs_get_advice_about_how_they_hang() {
    require_nvrtc();
    let runaway = |exercise: &Exercise| {
        let solution = solution_as_file(exercise);
        let index = solution
            .lines()
            .position(|line| line.trim_start().starts_with("unsigned int i = "))
            .expect("the solution computes its index");
        let mut lines: Vec<String> = solution.lines().map(String::from).collect();
        lines.insert(index + 1, "    while (i >= n) { i += 1; }".into());
        lines.join("\n") + "\n"
    };
    let syncwarp_in_if = |exercise: &Exercise| {
        let solution = solution_as_file(exercise);
        let once = solution.replacen(
            "__syncwarp();",
            "if (threadIdx.x % 32 == 31) { __syncwarp(); }",
            1,
        );
        assert_ne!(once, solution, "the solution has a __syncwarp()");
        once
    };
    type Attempt<'a> = &'a dyn Fn(&Exercise) -> String;
    let cases: [(&str, Attempt, &str, &str); 2] = [
        (
            "scalar-multiply-no-guard",
            &runaway,
            "A loop never ends",
            "moves toward its exit",
        ),
        (
            "warp-count-no-syncwarp",
            &syncwarp_in_if,
            "its mask names",
            "every lane that the mask names reach",
        ),
    ];
    for (name, attempt, wrong, change) in cases {
        let exercise = learn::find(name).expect("the exercise");
        let attempt = attempt(exercise);
        let report = check_source(exercise, &attempt, common::emulator());
        let hints = all_hints(exercise, &report).join("\n");
        let words = common::words(&hints);
        assert!(
            words.contains(wrong),
            "{name}:\n{hints}\nattempt:\n{attempt}"
        );
        assert!(words.contains(change), "{name}:\n{hints}");
        assert!(!words.contains("takes the lock"), "{name}:\n{hints}");
        if name == "warp-count-no-syncwarp" {
            // the count nobody wrote is told apart from a wrong count
            assert!(
                words.contains("that is a count no lane 31 wrote"),
                "{hints}"
            );
        }
    }
}

/// The file as it starts names its kernel's parameters its own way (`board, scratch`, where the
/// host's kernel says `in, out`): no note about names the learner never chose.
#[test]
fn a_starting_file_gets_no_note_about_its_own_parameter_names() {
    require_nvrtc();
    let exercise = learn::find("iterate-multi-block").expect("the multi-block iteration");
    let report = check_source(exercise, &exercise.starting_text(), common::emulator());
    let notes = report.notes.join("\n");
    assert!(!notes.contains("names its parameters"), "{notes}");
    // Renamed by the learner in another order than the host's, the note comes back.
    let start = exercise.starting_text();
    let (board, scratch) = ("board", "scratch");
    assert!(start.contains(board) && start.contains(scratch), "{start}");
    let swapped = start
        .replace(board, "TEMP_NAME")
        .replace(scratch, board)
        .replace("TEMP_NAME", scratch);
    let report = check_source(exercise, &swapped, common::emulator());
    let notes = report.notes.join("\n");
    assert!(notes.contains("names its parameters"), "{notes}");
}

/// A race between blocks is not told to add a `__syncthreads()`, which waits only for its own
/// block: its hints name atomics and fences.
#[test]
fn a_race_between_blocks_gets_hints_about_atomics_and_fences() {
    require_nvrtc();
    let exercise = learn::find("atomic-finish").expect("the atomic-finish exercise");
    let solution = solution_as_file(exercise);
    let racy = solution.replacen("atomicAdd(total, sum);", "*total += sum;", 1);
    assert_ne!(
        racy, solution,
        "the solution adds with atomicAdd(total, sum)"
    );
    let report = check_source(exercise, &racy, common::emulator());
    let second = hint_lines(exercise, &report, 2, Asked::Command).join("\n");
    assert!(second.contains("different blocks"), "{second}");
    let third = hint_lines(exercise, &report, 3, Asked::Command).join("\n");
    assert!(third.contains("__threadfence()"), "{third}");
    assert!(!third.contains("Put a __syncthreads()"), "{third}");
}

/// A read of padding nothing wrote, with the scan still right, is no exercise's failure: its
/// hints still climb from where to look to what to change, and end with the last-hint line.
#[test]
fn a_lone_unwritten_read_gets_hints_of_its_own() {
    require_nvrtc();
    let exercise = learn::find("blelloch-no-padding").expect("the blelloch-no-padding exercise");
    let solution = solution_as_file(exercise);
    let unpadded = solution.replacen(
        "temp[i] = i < n ? in[i] : 0;",
        "if (i < n) temp[i] = in[i];",
        1,
    );
    assert_ne!(unpadded, solution, "the solution pads with the identity");
    let report = check_source(exercise, &unpadded, common::emulator());
    let hints = each_hint(exercise, &report);
    assert!(
        hints[0].contains("a read of memory nothing wrote"),
        "{}",
        hints[0]
    );
    assert!(hints[1].contains("no thread wrote"), "{}", hints[1]);
    assert!(
        hints[2].contains("written before any thread reads it"),
        "{}",
        hints[2]
    );
    assert!(hints[2].contains("That is the last hint"), "{}", hints[2]);
}

/// A kernel the host cannot launch gets three different hints, the last saying it is the last.
#[test]
fn a_kernel_the_host_cannot_launch_gets_hints_that_climb() {
    require_nvrtc();
    let exercise = learn::find("saxpy").expect("the saxpy exercise");
    let solution = solution_as_file(exercise);
    let renamed = solution.replacen("void saxpy(", "void my_saxpy(", 1);
    assert_ne!(renamed, solution, "the solution declares saxpy");
    let report = check_source(exercise, &renamed, common::emulator());
    let hints = each_hint(exercise, &report);
    assert!(hints[0].contains("my_saxpy"), "{}", hints[0]);
    assert_ne!(hints[1], hints[0]);
    assert!(hints[2].contains("That is the last hint"), "{}", hints[2]);
}

/// The issue's tiles: an early `return` for threads past the matrix, before the tile loop's
/// barriers. A warp whose lanes all returned ends before the warp whose branch left first, and
/// the report still blames the return's `if`, not the closing brace.
#[test]
fn an_early_return_before_the_tiles_barriers_is_blamed_on_the_return() {
    require_nvrtc();
    let exercise = learn::find("tiled-no-bounds").expect("the tiled-no-bounds exercise");
    let start = exercise.starting_text();
    let guard = "    if (row >= M || col >= N) {\n        return;\n    }\n";
    let returning = start.replacen(
        "    float sum = 0.0f;\n",
        &format!("    float sum = 0.0f;\n{guard}"),
        1,
    );
    assert_ne!(returning, start, "the start declares sum");
    let guard_line = returning
        .lines()
        .position(|line| line.contains("if (row >= M"))
        .expect("the guard")
        + 1;
    let report = check_source(exercise, &returning, common::emulator());
    let first = hint_lines(exercise, &report, 1, Asked::Command).join("\n");
    assert!(first.contains("barrier divergence"), "{first}");
    assert!(
        first.contains(&format!("line {guard_line}: if (row >= M || col >= N) {{")),
        "{first}"
    );
    assert!(!first.contains(": }"), "{first}");
}

/// partial-dot-typo's race is its typo: a learner who keeps the read and the write apart with a
/// barrier silences racecheck, and the typo's wrong sum is left. That is still the slip the
/// exercise is about, so hints 2 and 3 stay its own.
#[test]
fn a_race_silenced_with_the_typo_kept_keeps_the_exercises_hints() {
    require_nvrtc();
    let exercise = learn::find("partial-dot-typo").expect("the ch5 typo exercise");
    let start = exercise.starting_text();
    let racy = start
        .lines()
        .position(|line| line.contains("s_block[tid] += s_block[tid + 1];"))
        .expect("the starting file's typo");
    let lines: Vec<&str> = start.lines().collect();
    assert!(lines[racy - 1].trim() == "if (tid < i) {" && lines[racy + 1].trim() == "}");
    let apart = [
        "        float next = tid < i ? s_block[tid + 1] : 0.0f;",
        "        __syncthreads();",
        "        if (tid < i) {",
        "            s_block[tid] += next;",
        "        }",
    ];
    let attempt: Vec<&str> = lines[..racy - 1]
        .iter()
        .copied()
        .chain(apart)
        .chain(lines[racy + 2..].iter().copied())
        .collect();
    let attempt = attempt.join("\n") + "\n";
    let report = check_source(exercise, &attempt, common::emulator());
    assert_eq!(
        report
            .outcome
            .as_ref()
            .err()
            .and_then(|failure| failure.reason()),
        Some(learn::Reason::Check(harness::Expect::WrongResult)),
        "{attempt}"
    );
    let second = hint_lines(exercise, &report, 2, Asked::Command).join("\n");
    assert!(
        !second.contains("This is not how the file started"),
        "{second}"
    );
    assert!(second.contains("what should thread tid add"), "{second}");
    let third = hint_lines(exercise, &report, 3, Asked::Command).join("\n");
    assert!(third.contains("s_block[tid + i]"), "{third}");
}

/// A race at the stated line is the starting one only when its other side is too: in
/// partial-dot-typo, taking out the barrier after `s_block[tid] = sum;` races that store with
/// the tree's addition, the stated line, and the typo's hints do not explain it.
#[test]
fn a_race_of_the_stated_line_with_another_is_the_learners_own() {
    require_nvrtc();
    let exercise = learn::find("partial-dot-typo").expect("the ch5 typo exercise");
    let start = exercise.starting_text();
    let store = "s_block[tid] = sum;\n    __syncthreads();\n";
    assert!(start.contains(store), "{start}");
    let attempt = start.replacen(store, "s_block[tid] = sum;\n", 1);
    let report = check_source(exercise, &attempt, common::emulator());
    let failure = report.outcome.as_ref().expect_err("a race");
    assert!(
        !is_starting_failure(exercise, failure, &report.path, &report.source),
        "{attempt}"
    );
    let second = hint_lines(exercise, &report, 2, Asked::Command).join("\n");
    assert!(
        second.contains("This is not how the file started"),
        "{second}"
    );
    // The file as it started still gets the exercise's own hints.
    let untouched = check_source(exercise, &start, common::emulator());
    let failure = untouched.outcome.as_ref().expect_err("the starting race");
    assert!(is_starting_failure(
        exercise,
        failure,
        &untouched.path,
        &untouched.source
    ));
}

/// tree-sync-in-if with its `if` turned into an early `return` before the barrier: the
/// barrier is the same, but the threads now leave the kernel at a line the starting file does
/// not have, so the hints explain threads that leave before a barrier, not the `if` the
/// exercise's own hints speak of.
#[test]
fn a_barrier_left_by_an_early_return_gets_hints_about_the_return() {
    require_nvrtc();
    let exercise = learn::find("tree-sync-in-if").expect("the ch2 exercise");
    let start = exercise.starting_text();
    let branch = "        if (tid < i) {\n            s[tid] += s[tid + i];\n";
    assert!(start.contains(branch), "{start}");
    let returned = start
        .replacen(
            branch,
            "        if (tid >= i) {\n            return;\n        }\n        {\n            s[tid] += s[tid + i];\n",
            1,
        );
    let report = check_source(exercise, &returned, common::emulator());
    let failure = report
        .outcome
        .as_ref()
        .expect_err("a barrier some threads leave");
    assert_eq!(
        failure.reason(),
        Some(learn::Reason::Check(harness::Expect::BarrierDivergence)),
        "{returned}"
    );
    let second = hint_lines(exercise, &report, 2, Asked::Command).join("\n");
    assert!(
        second.contains("This is not how the file started"),
        "{second}"
    );
    assert!(
        second.contains("lines the starting file's did not"),
        "{second}"
    );
    let third = hint_lines(exercise, &report, 3, Asked::Command).join("\n");
    assert!(
        common::words(&third).contains("return only after the last barrier"),
        "{third}"
    );
}

/// The starting text of `exercise` with `piece` (which it must hold) written `with`, and that
/// attempt's report on the emulator.
fn edited_start(exercise: &Exercise, piece: &str, with: &str) -> (String, Report) {
    let start = exercise.starting_text();
    assert!(
        start.contains(piece),
        "{}: no `{piece}` in\n{start}",
        exercise.name
    );
    let attempt = start.replacen(piece, with, 1);
    let report = check_source(exercise, &attempt, common::emulator());
    (attempt, report)
}

/// The starting text with `line` inserted after the first line that `after` matches.
fn starting_with_line_after(exercise: &Exercise, after: &str, line: &str) -> String {
    let mut lines: Vec<String> = exercise
        .starting_text()
        .lines()
        .map(str::to_string)
        .collect();
    let at = lines
        .iter()
        .position(|l| l.trim().starts_with(after))
        .unwrap_or_else(|| panic!("{}: no line starts with {after}", exercise.name));
    lines.insert(at + 1, line.to_string());
    lines.join("\n") + "\n"
}

/// A learner's barrier that does not fix the bug but moves the lines under it: the race is
/// the one the file started with, its statements where the edit moved them, so the exercise's
/// own hints still fit.
#[test]
fn a_race_whose_lines_moved_is_still_the_starting_one() {
    require_nvrtc();
    let exercise = learn::find("tiled-missing-second-sync").expect("the tiled exercise");
    let attempt = starting_with_line_after(exercise, "As[ty][tx] =", "        __syncthreads();");
    let report = check_source(exercise, &attempt, common::emulator());
    let Err(failure) = &report.outcome else {
        panic!("the attempt still races:\n{attempt}")
    };
    assert!(
        is_starting_failure(exercise, failure, &report.path, &report.source),
        "{:?}\n{attempt}",
        failure.lines(&report.path)
    );
    let second = hint_lines(exercise, &report, 2, Asked::Command).join("\n");
    assert!(
        !second.contains("This is not how the file started"),
        "{second}"
    );
}

/// A deadlock inside a given helper (a warp shuffle that thread 0 alone reaches) is quoted at the
/// learner's own line too, the kernel's call of the helper, not only at the helper's line.
#[test]
fn a_hang_inside_a_helper_quotes_the_learners_call() {
    require_nvrtc();
    let exercise = learn::find("atomic-finish").expect("the atomic finish exercise");
    let attempt = exercise.starting_text().replace(
        "    // TODO: add this block's sum (block_sum of thread_sum) to *total, once per",
        "    if (threadIdx.x == 0) { atomicAdd(total, block_sum(thread_sum(x, n))); }\n    // TODO: add this block's sum (block_sum of thread_sum) to *total, once per",
    );
    let call = attempt
        .lines()
        .position(|l| l.contains("atomicAdd(total, block_sum"))
        .expect("the call") as u32
        + 1;
    let helper_call = attempt
        .lines()
        .position(|l| l.contains("warp_sum(") && !l.contains("__device__"))
        .expect("block_sum's call of warp_sum") as u32
        + 1;
    let report = check_source(exercise, &attempt, common::emulator());
    assert!(!report.passed());
    let first = hint_lines(exercise, &report, 1, Asked::Command).join("\n");
    // The whole chain: the shuffle, the helper's call of its helper, the learner's call.
    assert!(
        first.contains(&format!("line {helper_call}, which calls it:"))
            && first.contains(&format!("line {call}, which calls that:")),
        "hint 1 should quote block_sum's call at line {helper_call}, then the call at line {call}:\n{first}"
    );
}

/// Two atomics in a row (an atomic read, then an atomic write of what it read plus one) lose
/// updates with every checker silent: hint 2 says why, instead of "no two threads collide".
#[test]
fn a_read_then_write_in_two_atomics_is_named_as_a_lost_update() {
    require_nvrtc();
    let exercise = learn::find("racy-increment").expect("the racy-increment exercise");
    let solution = solution_as_file(exercise);
    let split = solution.replacen(
        "atomicAdd(&x[0], 1);",
        "int old = atomicAdd(&x[0], 0); atomicExch(&x[0], old + 1);",
        1,
    );
    assert_ne!(
        split, solution,
        "the solution adds with atomicAdd(&x[0], 1)"
    );
    let report = check_source(exercise, &split, common::emulator());
    assert!(!report.passed(), "lost updates give a wrong count");
    let second = hint_lines(exercise, &report, 2, Asked::Command)
        .join(" ")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    assert!(
        second.contains(
            "an atomic read and then an atomic write of the same place are not one update"
        ),
        "{second}"
    );
}

/// A statement racing with itself that the learner splits into a read into a register and a
/// write is still the race the file started with: hillis-steele-single-buffer's own hints, not
/// news of a change.
#[test]
fn a_racing_statement_split_in_two_is_still_the_starting_race() {
    require_nvrtc();
    let exercise = learn::find("hillis-steele-single-buffer").expect("the ch6 exercise");
    let start = exercise.starting_text();
    let racing = "sum_buf[tid] += sum_buf[tid - iter];";
    assert!(start.contains(racing), "{start}");
    let attempt = start.replacen(
        racing,
        "unsigned int before = sum_buf[tid - iter];\n            sum_buf[tid] += before;",
        1,
    );
    let report = check_source(exercise, &attempt, common::emulator());
    let failure = report.outcome.as_ref().expect_err("still a race");
    assert!(
        is_starting_failure(exercise, failure, &report.path, &report.source),
        "{attempt}"
    );
    let second = hint_lines(exercise, &report, 2, Asked::Command).join("\n");
    assert!(
        !second.contains("This is not how the file started"),
        "{second}"
    );
}

/// A ring step that reads past its own chunk races with the neighbouring device's launch: the
/// hints speak of two launches and their loops' bounds, not of barriers inside one kernel.
#[test]
fn a_race_between_two_devices_launches_is_explained_as_one() {
    require_nvrtc();
    let exercise = learn::find("ring-all-reduce").expect("the ch8 write exercise");
    let start = exercise.starting_text();
    let todo = "    // TODO: copy chunk `chunk` of the previous device's buffer into mine, with a\n    //       grid-stride loop\n";
    assert!(start.contains(todo), "{start}");
    let attempt = start.replacen(
        todo,
        "    unsigned long long end = chunk_begin(n, chunk + 1, ranks);\n    for (unsigned long long j = blockIdx.x * blockDim.x + threadIdx.x; j < end;\n         j += gridDim.x * blockDim.x)\n        mine[j] = previous[j];\n",
        1,
    );
    let report = check_source(exercise, &attempt, common::emulator());
    assert!(!report.passed(), "{attempt}");
    let second = hint_lines(exercise, &report, 2, Asked::Command).join("\n");
    assert!(
        second.contains("Two launches that may run at the same time"),
        "{second}"
    );
    let third = hint_lines(exercise, &report, 3, Asked::Command).join("\n");
    assert!(third.contains("bounds"), "{third}");
    assert!(!third.contains("__syncthreads()"), "{third}");
}

/// Life in place with the early `return` replaced by a clamp, the new cell computed into a
/// register, a barrier, then the store: the race is now between blocks, and it is still the
/// file's starting one (update in place), so the hints lead to two boards, not to atomics.
#[test]
fn a_store_split_around_a_barrier_keeps_the_two_boards_hints() {
    require_nvrtc();
    let exercise = learn::find("step-in-place").expect("the ch3 exercise");
    let start = exercise.starting_text();
    let guard = "    if (x >= width || y >= height) {\n        return;\n    }\n";
    let store = "    row[x] = alive == 3 || (row[x] && alive == 2);\n";
    assert!(start.contains(guard) && start.contains(store), "{start}");
    let attempt = start
        .replacen(
            guard,
            "    bool inside = x < width && y < height;\n    if (!inside) {\n        x = 0;\n        y = 0;\n    }\n",
            1,
        )
        .replacen(
            store,
            "    unsigned char next = alive == 3 || (row[x] && alive == 2);\n    __syncthreads();\n    if (inside) {\n        row[x] = next;\n    }\n",
            1,
        );
    let report = check_source(exercise, &attempt, common::emulator());
    let failure = report.outcome.as_ref().expect_err("blocks still race");
    assert!(
        is_starting_failure(exercise, failure, &report.path, &report.source),
        "{:?}\n{attempt}",
        failure.lines(&report.path)
    );
    let third = hint_lines(exercise, &report, 3, Asked::Command).join("\n");
    assert!(third.contains("old board"), "{third}");
    assert!(!third.contains("atomic"), "{third}");
    // The same, with the neighbours counted under `if (inside)`: the race now names the first
    // of the sum's three lines, where the start named its last; one statement all the same.
    let counted_inside = "    bool inside = x < width && y < height;\n    unsigned char next = 0;\n    unsigned char *row = board + y * width;\n    if (inside) {\n        unsigned int left = x == 0 ? width - 1 : x - 1, right = x == width - 1 ? 0 : x + 1;\n        unsigned int up = y == 0 ? height - 1 : y - 1, down = y == height - 1 ? 0 : y + 1;\n        unsigned char *above = board + up * width, *below = board + down * width;\n        unsigned int alive = above[left] + above[x] + above[right]\n                           + row[left]              + row[right]\n                           + below[left] + below[x] + below[right];\n        next = alive == 3 || (row[x] && alive == 2);\n    }\n    __syncthreads();\n    if (inside) {\n        row[x] = next;\n    }\n}\n";
    let head = start
        .split(guard)
        .next()
        .expect("the text before the guard");
    let attempt = format!("{head}{counted_inside}");
    // And the store written by the flat index instead of `row[x]`: still the starting store.
    let flat_store = attempt.replacen(
        "    if (inside) {\n        row[x] = next;\n    }\n",
        "    if (inside) board[y * width + x] = next;\n",
        1,
    );
    assert_ne!(flat_store, attempt);
    let report = check_source(exercise, &flat_store, common::emulator());
    let failure = report.outcome.as_ref().expect_err("blocks still race");
    assert!(
        is_starting_failure(exercise, failure, &report.path, &report.source),
        "{:?}\n{flat_store}",
        failure.lines(&report.path)
    );
    let report = check_source(exercise, &attempt, common::emulator());
    let failure = report.outcome.as_ref().expect_err("blocks still race");
    assert!(
        is_starting_failure(exercise, failure, &report.path, &report.source),
        "{:?}\n{attempt}",
        failure.lines(&report.path)
    );
}

/// A learner who took the lock with atomicCAS but left out the fences still has the race the
/// file started with; its hints speak of what is left (the fences), not of the gap between a
/// read and a write that the learner already closed.
#[test]
fn a_lock_taken_with_atomic_cas_gets_hints_about_the_fences_left() {
    require_nvrtc();
    let exercise = learn::find("read-then-write-lock").expect("the ch5 exercise");
    let start = exercise.starting_text();
    let read_then_write = start
        .lines()
        .skip_while(|line| !line.contains("while (*mutex != 0)"))
        .take(3)
        .collect::<Vec<_>>()
        .join("\n");
    assert!(read_then_write.contains("*mutex = 1;"), "{start}");
    let attempt = start.replacen(
        &read_then_write,
        "        while (atomicCAS((int *)mutex, 0, 1) != 0) {\n        }",
        1,
    );
    let report = check_source(exercise, &attempt, common::emulator());
    let failure = report
        .outcome
        .as_ref()
        .expect_err("no fences: still a race");
    assert!(
        is_starting_failure(exercise, failure, &report.path, &report.source),
        "{attempt}"
    );
    let second = hint_lines(exercise, &report, 2, Asked::Command).join(" ");
    assert!(!second.contains("between the read"), "{second}");
    assert!(second.contains("one atomic step now"), "{second}");
    let third = hint_lines(exercise, &report, 3, Asked::Command).join(" ");
    assert!(third.contains("__threadfence()"), "{third}");
    assert!(!third.contains("while (atomicCAS"), "{third}");
}

/// Threads that `break` out of a loop holding a barrier leave it: the report blames the line
/// they left by (NVRTC folds the `if` into the loop's test, at the `for`), and the last hint
/// speaks of leaving a loop, not only of returns.
#[test]
fn a_break_out_of_a_loop_with_a_barrier_is_blamed_on_the_break() {
    require_nvrtc();
    let exercise = learn::find("tree-sync-in-if").expect("the ch2 exercise");
    let start = exercise.starting_text();
    let branch = "        if (tid < i) {\n            s[tid] += s[tid + i];\n            __syncthreads();\n        }\n";
    assert!(start.contains(branch), "{start}");
    for (leave, the_if) in [
        ("break", "if (tid >= i) {"),
        ("continue", "if (tid >= i) {"),
    ] {
        let attempt = start.replacen(
            branch,
            &format!(
                "        if (tid >= i) {{\n            {leave};\n        }}\n        s[tid] += s[tid + i];\n        __syncthreads();\n"
            ),
            1,
        );
        let line = attempt
            .lines()
            .position(|l| l.trim() == the_if)
            .expect("the if") as u32
            + 1;
        let report = check_source(exercise, &attempt, common::emulator());
        let failure = report
            .outcome
            .as_ref()
            .expect_err("a barrier some threads leave");
        assert_eq!(
            failure.reason(),
            Some(learn::Reason::Check(harness::Expect::BarrierDivergence)),
            "{attempt}"
        );
        let first = hint_lines(exercise, &report, 1, Asked::Command).join("\n");
        assert!(
            first.contains(&format!("line {line}: {the_if}"))
                && first.contains("skipped the barrier, then exited"),
            "{leave}: hint 1 should blame line {line}:\n{first}"
        );
        let third = common::words(&hint_lines(exercise, &report, 3, Asked::Command).join("\n"));
        assert!(third.contains("no break or continue"), "{third}");
    }
}

/// A line the learner adds above the failing statements (a comment) moves their line numbers
/// but is no new failure: the hints go on from where they were, not from hint 1.
#[test]
fn a_line_added_above_the_failure_keeps_the_hints_subject() {
    require_nvrtc();
    let exercise = learn::find("racy-increment").expect("the ch4 exercise");
    let start = exercise.starting_text();
    let before = check_source(exercise, &start, common::emulator());
    let shifted = starting_with_line_after(exercise, "{", "    // my note: which threads add?");
    let after = check_source(exercise, &shifted, common::emulator());
    assert!(!before.passed() && !after.passed());
    assert_ne!(
        before.outcome.as_ref().err().map(|f| f.lines(&before.path)),
        after.outcome.as_ref().err().map(|f| f.lines(&after.path)),
        "the comment moves the failing lines"
    );
    assert_eq!(subject(&before), subject(&after));
}

/// A store guarded by its flat index (`row * N + col < M * N`) stays inside C but lets threads
/// past the last column write into the next row, where other threads write: the race at the
/// stated store is the missing guard in another form, and keeps the exercise's hints.
#[test]
fn a_partial_guard_that_turns_the_overflow_into_a_race_keeps_the_exercises_hints() {
    require_nvrtc();
    let exercise = learn::find("naive-write-outside-guard").expect("the ch7 exercise");
    let (attempt, report) = edited_start(
        exercise,
        "    C[row * N + col] = sum;",
        "    if (row * N + col < M * N) C[row * N + col] = sum;",
    );
    let failure = report
        .outcome
        .as_ref()
        .expect_err("two threads write one element");
    assert_eq!(
        failure.reason(),
        Some(learn::Reason::Check(harness::Expect::Race))
    );
    assert!(
        is_starting_failure(exercise, failure, &report.path, &report.source),
        "{attempt}"
    );
    let third = hint_lines(exercise, &report, 3, Asked::Command).join(" ");
    assert!(third.contains("row < M and col < N"), "{third}");
    assert!(!third.contains("atomic"), "{third}");
}

/// The increment's read and write split around a barrier: within one block every thread reads
/// before any writes, and they all write the same value, which racecheck does not report. The
/// wrong count left is the lost update the file started with, and gets its hints.
#[test]
fn an_increment_split_around_a_barrier_keeps_the_lost_update_hints() {
    require_nvrtc();
    let exercise = learn::find("racy-increment").expect("the ch4 exercise");
    let (attempt, report) = edited_start(
        exercise,
        "x[0] = x[0] + 1;",
        "int v = x[0];\n    __syncthreads();\n    x[0] = v + 1;",
    );
    let failure = report.outcome.as_ref().expect_err("updates are still lost");
    assert!(
        is_starting_failure(exercise, failure, &report.path, &report.source),
        "{attempt}"
    );
    let third = hint_lines(exercise, &report, 3, Asked::Command).join(" ");
    assert!(third.contains("atomicAdd"), "{third}");
}

/// A learner who let the last chunk take the rest covers every value but cuts the chunks
/// otherwise than the host: hint 2 speaks of that cut, not of value 6 that is in no chunk.
#[test]
fn a_last_chunk_that_takes_the_rest_gets_hints_about_the_hosts_cut() {
    require_nvrtc();
    let exercise = learn::find("ring-wrong-offset").expect("the ch8 exercise");
    let (attempt, report) = edited_start(
        exercise,
        "unsigned long long end = begin + per_chunk;",
        "unsigned long long end = chunk == ranks - 1 ? n : begin + per_chunk;",
    );
    assert!(!report.passed(), "{attempt}");
    let second = common::words(&hint_lines(exercise, &report, 2, Asked::Command).join("\n"));
    assert!(
        second.contains("A last chunk that takes the rest"),
        "{second}"
    );
    assert!(!second.contains("value 6 is in neither"), "{second}");
}

/// A barrier put inside the counting loop leaves the starting race and adds a divergence of the
/// learner's own: hint 1 names both, and hint 3 says what to change for the divergence too.
#[test]
fn a_second_kind_of_failure_beside_the_starting_one_is_named_and_fixed_too() {
    require_nvrtc();
    let exercise = learn::find("histogram-shared-no-merge-barrier").expect("the ch4 exercise");
    let (attempt, report) = edited_start(
        exercise,
        "            atomicAdd(&block_histo[c], 1u);\n        }\n    }\n",
        "            atomicAdd(&block_histo[c], 1u);\n        }\n        __syncthreads();\n    }\n",
    );
    assert!(!report.passed(), "{attempt}");
    let first = common::words(&hint_lines(exercise, &report, 1, Asked::Command).join("\n"));
    assert!(
        first.contains("It also fails with barrier divergence"),
        "{first}"
    );
    let third = common::words(&hint_lines(exercise, &report, 3, Asked::Command).join("\n"));
    assert!(
        third.starts_with("hint 3 of 3") && third.contains("For barrier divergence at lines"),
        "{third}"
    );
    assert!(
        third.contains("between the counting loop and the merge loop"),
        "{third}"
    );
}

/// A shuffle under `if (lane < offset)` hangs its warp: the report leads with the warp-sync
/// error that says why (lanes named in the mask never arrive), and hint 1 quotes that one, not
/// only the deadlock it ends in.
#[test]
fn a_shuffle_some_lanes_skip_is_quoted_as_the_warp_sync_error() {
    require_nvrtc();
    let exercise = learn::find("warp-shuffle").expect("the ch2 exercise");
    let (attempt, report) = edited_start(
        exercise,
        "    // TODO: return, in lane 0, the sum of the warp's 32 values, with\n    //       __shfl_down_sync\n",
        "    unsigned int lane = threadIdx.x % 32;\n    for (int offset = 16; offset > 0; offset /= 2) {\n        if (lane < offset) {\n            value += __shfl_down_sync(0xffffffff, value, offset);\n        }\n    }\n",
    );
    assert!(!report.passed(), "{attempt}");
    let first = common::words(&hint_lines(exercise, &report, 1, Asked::Command).join("\n"));
    assert!(
        first.contains("lanes named in the mask never arrive"),
        "{first}"
    );
}

/// The last-block finish is checked under PTX's memory model: the reader's fence after the
/// barrier, in every thread (where the chapter's kernel once had it, and where a reading of
/// the CUDA guide puts it), leaves the other threads' reads of `partial` unordered.
#[test]
fn dot_one_launch_with_the_readers_fence_after_the_barrier_races() {
    require_nvrtc();
    let exercise = learn::find("dot-one-launch").expect("the ch5 exercise");
    let solution = solution_as_file(exercise);
    let fence = "        // A fence after the tick";
    let start = solution
        .find(fence)
        .expect("the solution's second fence's comment");
    let fence_line = "__threadfence();\n";
    let end = start + solution[start..].find(fence_line).expect("its fence") + fence_line.len();
    let moved = solution[..start].to_string() + &solution[end..];
    let moved = moved.replacen(
        "    if (is_last) {\n",
        "    if (is_last) {\n        __threadfence();\n",
        1,
    );
    assert_ne!(moved, solution, "the edit did not apply");
    assert!(
        check_source(exercise, &solution, common::emulator()).passed(),
        "the solution itself must pass"
    );
    let report = check_source(exercise, &moved, common::emulator());
    let text = learn::render::failure_lines(
        report
            .outcome
            .as_ref()
            .expect_err("the moved fence must fail"),
        &report.source,
    )
    .join("\n");
    assert!(text.contains("race"), "{text}");
    assert!(text.contains("partial["), "{text}");
}
