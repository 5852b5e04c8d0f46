//! One source of truth for the track's size: the list in `learn/src/track/`. The README and the
//! book's learn page give its counts in words; these tests fail when a count there differs
//! from the list, so adding an exercise means updating them in the same commit.

use learn::exercise::Start;
use learn::track;

fn repository_file(path: &str) -> String {
    let full = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join(path);
    std::fs::read_to_string(&full).unwrap_or_else(|error| panic!("cannot read {path}: {error}"))
}

/// Every number written just before `noun` in `text` (`41 exercises` gives 41), with the line
/// it is on, so a stray count anywhere on the page is caught, not only the one we expect.
fn counts_before(text: &str, noun: &str) -> Vec<(usize, String)> {
    let mut found = Vec::new();
    for line in text.lines() {
        let mut rest = line;
        while let Some(at) = rest.find(noun) {
            let digits: String = rest[..at]
                .trim_end()
                .chars()
                .rev()
                .take_while(char::is_ascii_digit)
                .collect::<Vec<_>>()
                .into_iter()
                .rev()
                .collect();
            if let Ok(count) = digits.parse() {
                found.push((count, line.to_string()));
            }
            rest = &rest[at + noun.len()..];
        }
    }
    found
}

fn fix_and_write() -> (usize, usize) {
    let fix = track()
        .iter()
        .filter(|exercise| matches!(exercise.start, Start::Fix(_)))
        .count();
    (fix, track().len() - fix)
}

#[test]
fn the_readme_counts_the_track_and_lists_its_commands() {
    let readme = repository_file("README.md");
    let total = track().len();
    let stated = format!("the exercise track: {total} kernels to fix or write");
    assert!(
        readme.contains(&stated),
        "README.md should say `{stated}` (the track has {total})"
    );
    for (count, line) in counts_before(&readme, " kernels to fix")
        .into_iter()
        .chain(counts_before(&readme, " exercises"))
    {
        assert_eq!(count, total, "README.md counts {count} in: {line}");
    }
    for command in [
        "cargo learn list",
        "cargo learn check",
        "cargo learn hint",
        "cargo learn solution",
        "cargo racetrack",
    ] {
        assert!(
            readme.contains(command),
            "README.md should show `{command}`"
        );
    }
}

#[test]
fn the_book_counts_the_track_by_kind() {
    let page = repository_file("book/src/learn.md");
    let total = track().len();
    let (fix, write) = fix_and_write();
    for stated in [
        format!("{total} exercises in book order"),
        format!("**Fix it** ({fix})"),
        format!("**Write it** ({write})"),
    ] {
        assert!(
            page.contains(&stated),
            "book/src/learn.md should say `{stated}`: the track has {total}, {fix} to fix and {write} to write"
        );
    }
    for (count, line) in counts_before(&page, " exercises") {
        assert_eq!(count, total, "book/src/learn.md counts {count} in: {line}");
    }
}

#[test]
fn counts_are_read_where_they_are_written() {
    assert_eq!(
        counts_before("has 41 exercises and 3 exercises more", " exercises"),
        vec![
            (41, "has 41 exercises and 3 exercises more".to_string()),
            (3, "has 41 exercises and 3 exercises more".to_string())
        ]
    );
    assert!(counts_before("no count exercises here", " exercises").is_empty());
}

/// The pointer parameters of every `__global__` function in `source`: what a kernel's result
/// is stored through.
fn pointer_parameters(source: &str) -> Vec<String> {
    let mut found = Vec::new();
    for (at, _) in source.match_indices("__global__") {
        let Some(open) = source[at..].find('(') else {
            continue;
        };
        let Some(close) = source[at + open..].find(')') else {
            continue;
        };
        for parameter in source[at + open + 1..at + open + close].split(',') {
            if let Some((_, name)) = parameter.rsplit_once('*') {
                found.push(name.trim().to_string());
            }
        }
    }
    found
}

/// A write exercise's hints may say what to compute and where, but never hand over a statement
/// of the solution that stores the kernel's result: that line is the answer, and the answer
/// stays behind `cargo learn solution NAME`.
#[test]
fn no_hint_of_a_write_exercise_quotes_the_solutions_store() {
    let squash = |text: &str| -> String { text.chars().filter(|c| !c.is_whitespace()).collect() };
    let mut quoted = Vec::new();
    for exercise in track()
        .iter()
        .filter(|exercise| matches!(exercise.start, Start::Write { .. }))
    {
        let source = exercise.solution.source;
        let outputs = pointer_parameters(source);
        let hints = squash(&exercise.hints.join(" "));
        for statement in source.split([';', '{', '}']).map(squash) {
            let stores = outputs.iter().any(|name| {
                statement.starts_with(&format!("{name}["))
                    || statement.starts_with(&format!("*{name}="))
                    || statement.contains(&format!("({name},"))
                    || statement.contains(&format!("(&{name}["))
            });
            if stores && statement.len() > 8 && hints.contains(&statement) {
                quoted.push(format!("{}: `{statement}`", exercise.name));
            }
        }
    }
    assert!(
        quoted.is_empty(),
        "hints quote the solution's store:\n{}",
        quoted.join("\n")
    );
}
