//! The rustlings dev check: every exercise's starting file fails its check for the reason its
//! statement gives (the failure kind, at the stated line), and the chapter's kernel that
//! solves it passes. An exercise that passes untouched fails here, and so in CI.
//!
//! Every finding of the failing case counts, not only the first: the stated reason must be
//! among them, a finding of the stated kind must name the stated line (another kind naming it
//! proves nothing), the learner's screen must quote that line, and no finding may be of a kind
//! no exercise states (it would be a failure the statement does not explain).

mod common;

use harness::testing::require_nvrtc;
use learn::exercise::{Line, Start};
use learn::render::report_lines;
use learn::{Chapter, Exercise, check_source, track};

fn starting_file_fails_as_stated(exercise: &Exercise) -> Option<String> {
    let report = check_source(exercise, &exercise.starting_text(), common::options());
    let shown = || report_lines(&report, exercise).join("\n");
    let failure = match &report.outcome {
        Ok(_) => return Some(format!("{} passes untouched", exercise.path())),
        Err(failure) => failure,
    };
    let stated = exercise.fails.reason;
    if !failure.reasons().contains(&stated) {
        return Some(format!(
            "{} should fail with {stated}, but shows {:?}:\n{}",
            exercise.path(),
            failure.reasons(),
            shown()
        ));
    }
    let unexplained: Vec<String> = failure
        .unexplained()
        .iter()
        .map(|finding| format!("{:?}", finding.kind))
        .collect();
    if !unexplained.is_empty() {
        return Some(format!(
            "{}: findings of a kind no exercise states ({}):\n{}",
            exercise.path(),
            unexplained.join(", "),
            shown()
        ));
    }
    match (exercise.fails.line, exercise.stated_line()) {
        (Line::Unnamed, _) => {
            let lines = failure.lines(&exercise.path());
            (!lines.is_empty()).then(|| {
                format!(
                    "{}: a wrong result should name no line, this names {lines:?}:\n{}",
                    exercise.path(),
                    shown()
                )
            })
        }
        (_, None) => Some(format!(
            "{}: its stated line is not in the starting text",
            exercise.path()
        )),
        (_, Some(line)) => {
            if !failure.lines_for(stated, &exercise.path()).contains(&line) {
                return Some(format!(
                    "{}: no {stated} finding names line {line}:\n{}",
                    exercise.path(),
                    shown()
                ));
            }
            let screen = shown();
            let quoted = format!("line {line}: ");
            let logged = format!("{}:{line}: ", exercise.path());
            (!screen.contains(&quoted) && !screen.contains(&logged)).then(|| {
                format!(
                    "{}: the screen never shows line {line}:\n{screen}",
                    exercise.path()
                )
            })
        }
    }
}

fn solution_passes(exercise: &Exercise) -> Option<String> {
    let report = check_source(exercise, exercise.solution.source, common::options());
    // What the learner would see, for a run with --nocapture (on a GPU: its cases and goals).
    println!(
        "{}\n{}\n",
        exercise.solution.path,
        report_lines(&report, exercise).join("\n")
    );
    (!report.passed()).then(|| {
        format!(
            "{}'s solution, {}, does not pass:\n{}",
            exercise.name,
            exercise.solution.path,
            report_lines(&report, exercise).join("\n")
        )
    })
}

fn prove(chapter: Chapter) {
    require_nvrtc();
    let exercises: Vec<&Exercise> = track().iter().filter(|e| e.chapter == chapter).collect();
    assert!(!exercises.is_empty(), "{chapter} has no exercises");
    let problems: Vec<String> = exercises
        .iter()
        .flat_map(|exercise| {
            [
                starting_file_fails_as_stated(exercise),
                solution_passes(exercise),
            ]
        })
        .flatten()
        .collect();
    assert!(problems.is_empty(), "{}", problems.join("\n\n"));
}

#[test]
fn ch1_exercises_fail_as_stated_and_the_chapter_solves_them() {
    prove(Chapter::Map);
}

#[test]
fn ch2_exercises_fail_as_stated_and_the_chapter_solves_them() {
    prove(Chapter::Reductions);
}

#[test]
fn ch3_exercises_fail_as_stated_and_the_chapter_solves_them() {
    prove(Chapter::Life);
}

#[test]
fn ch4_exercises_fail_as_stated_and_the_chapter_solves_them() {
    prove(Chapter::Atomics);
}

#[test]
fn ch5_exercises_fail_as_stated_and_the_chapter_solves_them() {
    prove(Chapter::MutexDot);
}

#[test]
fn ch6_exercises_fail_as_stated_and_the_chapter_solves_them() {
    prove(Chapter::Scans);
}

#[test]
fn ch7_exercises_fail_as_stated_and_the_chapter_solves_them() {
    prove(Chapter::Matmul);
}

#[test]
fn ch8_exercises_fail_as_stated_and_the_chapter_solves_them() {
    prove(Chapter::ManyGpus);
}

/// Every broken variant of every chapter is a fix-it exercise, in the chapter's order, and so is
/// every broken kernel of the chapters' modules that combine them (the stencil's).
#[test]
fn every_broken_variant_is_an_exercise() {
    fn broken<K>(variants: &[harness::Variant<K>]) -> Vec<&'static str> {
        variants
            .iter()
            .filter(|v| !v.expect.is_correct())
            .map(|v| v.kernel.path)
            .collect()
    }
    let chapters = [
        (Chapter::Map, broken(ch1_map::VARIANTS)),
        (Chapter::Reductions, broken(ch2_reductions::VARIANTS)),
        (Chapter::Life, broken(ch3_life::VARIANTS)),
        (Chapter::Atomics, broken(ch4_atomics::VARIANTS)),
        (Chapter::MutexDot, broken(ch5_mutex_dot::VARIANTS)),
        (Chapter::Scans, broken(ch6_scans::VARIANTS)),
        (Chapter::Matmul, broken(ch7_matmul::VARIANTS)),
        // The ring without its event wait and the collectives out of order are fixed in host
        // code, which no exercise file holds.
        (
            Chapter::ManyGpus,
            broken(ch8_many_gpus::VARIANTS)
                .into_iter()
                .filter(|path| {
                    !path.ends_with("06_ring_without_wait.cu")
                        && !path.ends_with("09_collectives_out_of_order.cu")
                })
                .collect(),
        ),
    ];
    let fixes = |chapter: Chapter| -> Vec<&'static str> {
        track()
            .iter()
            .filter(|e| e.chapter == chapter)
            .filter_map(|e| match e.start {
                Start::Fix(kernel) => Some(kernel.path),
                Start::Write { .. } => None,
            })
            .collect()
    };
    for (chapter, kernels) in chapters {
        let own = format!("kernels/{}/", chapter.dir());
        let in_chapter: Vec<&str> = fixes(chapter)
            .into_iter()
            .filter(|path| path.starts_with(&own))
            .collect();
        assert_eq!(in_chapter, kernels, "{chapter}'s broken variants, in order");
    }
    let combined = [
        (Chapter::Life, broken(ch3_life::stencil::KERNELS)),
        (Chapter::Scans, broken(ch6_scans::compact::KERNELS)),
        (Chapter::Matmul, broken(ch7_matmul::transpose::KERNELS)),
    ];
    for (chapter, kernels) in combined {
        for kernel in kernels {
            assert!(
                fixes(chapter).contains(&kernel),
                "{kernel} is broken and no exercise of {chapter} starts from it"
            );
        }
    }
}

#[test]
fn every_exercise_is_complete_and_named_once() {
    let mut names = std::collections::BTreeSet::new();
    let mut paths = std::collections::BTreeSet::new();
    for exercise in track() {
        assert!(names.insert(exercise.name), "{} twice", exercise.name);
        assert!(paths.insert(exercise.path()), "{} twice", exercise.path());
        assert!(
            (2..=3).contains(&exercise.hints.len()),
            "{}: {} hints",
            exercise.name,
            exercise.hints.len()
        );
        for text in [exercise.title, exercise.statement, exercise.taught] {
            assert!(!text.trim().is_empty(), "{} lacks a text", exercise.name);
        }
        assert!(
            exercise.title.chars().count() <= 34,
            "{}: the list has room for 34 columns of title",
            exercise.name
        );
        let text = exercise.starting_text();
        assert!(
            !text.contains("// BUG:"),
            "{} gives its bug away",
            exercise.name
        );
        assert!(
            !text.contains("ANCHOR"),
            "{} shows book anchors",
            exercise.name
        );
        let header: Vec<&str> = text
            .lines()
            .take_while(|l| !l.starts_with("// ---"))
            .collect();
        common::assert_fits_80_columns(&header.join("\n"));
        // a chapter file the comments point to is one the learner can open
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        for word in text.split(|c: char| c.is_whitespace() || ";,()".contains(c)) {
            if word.starts_with("kernels/") && word.ends_with(".cu") {
                assert!(
                    root.join(word).is_file(),
                    "{} names {word}, which does not exist",
                    exercise.name
                );
            }
        }
    }
}
