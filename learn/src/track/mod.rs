//! The track: every exercise, chapter by chapter in book order. Each chapter's module lists its
//! exercises and the [`Check`]s that launch them.

use std::sync::OnceLock;

use harness::{Expect, KernelSource, Variant};

use crate::check::Check;
use crate::exercise::{Chapter, Exercise};

mod ch1;
mod ch2;
mod ch3;
mod ch4;
mod ch5;
mod ch6;
mod ch7;
mod ch8;

/// Every exercise, numbered within its chapter.
pub fn track() -> &'static [Exercise] {
    static TRACK: OnceLock<Vec<Exercise>> = OnceLock::new();
    TRACK.get_or_init(|| {
        let chapters = [
            (Chapter::Map, ch1::exercises()),
            (Chapter::Reductions, ch2::exercises()),
            (Chapter::Life, ch3::exercises()),
            (Chapter::Atomics, ch4::exercises()),
            (Chapter::MutexDot, ch5::exercises()),
            (Chapter::Scans, ch6::exercises()),
            (Chapter::Matmul, ch7::exercises()),
            (Chapter::ManyGpus, ch8::exercises()),
        ];
        let mut all = Vec::new();
        for (chapter, exercises) in chapters {
            for (index, mut exercise) in exercises.into_iter().enumerate() {
                exercise.chapter = chapter;
                exercise.number = index + 1;
                all.push(exercise);
            }
        }
        all
    })
}

/// The exercise called `name`; the error names the closest one when a typo is likely.
pub fn find(name: &str) -> Result<&'static Exercise, String> {
    if let Some(exercise) = track().iter().find(|exercise| exercise.name == name) {
        return Ok(exercise);
    }
    // A file's path works too, as an editor or a shell completes it: `exercises/ch1_map/01_….cu`,
    // `./01_….cu` from its folder, or an absolute path.
    let file = name.trim_start_matches("./");
    let by_file = |exercise: &&Exercise| {
        let path = exercise.path();
        file.ends_with(".cu")
            && (path == file
                || path.ends_with(&format!("/{file}"))
                || file.ends_with(&format!("/{path}")))
    };
    if let Some(exercise) = track().iter().find(by_file) {
        return Ok(exercise);
    }
    let closest = track()
        .iter()
        .map(|exercise| {
            (
                strsim::damerau_levenshtein(name, exercise.name),
                exercise.name,
            )
        })
        .min()
        .filter(|&(distance, _)| distance <= 3);
    Err(match closest {
        Some((_, near)) => {
            format!(
                "there is no exercise `{name}`; did you mean `{near}`? (`cargo learn list` names them all)"
            )
        }
        None => format!("there is no exercise `{name}`; `cargo learn list` names them all"),
    })
}

/// The learner's kernel dressed as the chapter variant `like`, so the chapter's own `run_*`
/// functions launch it exactly as they launch `like`.
pub fn as_variant<K: Copy>(kernel: KernelSource, like: &Variant<K>) -> Variant<K> {
    Variant {
        name: "your kernel",
        kernel,
        expect: Expect::Correct,
        summary: "",
        kind: like.kind,
    }
}

/// The fields every fix-it exercise shares, from the chapter's broken and fixed variants; the
/// chapter (and number) are set by [`track`].
pub(crate) fn fix_it<K>(
    broken: &'static Variant<K>,
    fixed: &'static Variant<K>,
    check: impl Check + 'static,
    fails: crate::exercise::Fails,
) -> Exercise {
    Exercise {
        name: broken.name,
        chapter: Chapter::Map,
        number: 0,
        title: "",
        statement: "",
        hints: &[],
        part_fixed: &[],
        taught: "",
        start: crate::exercise::Start::Fix(broken.kernel),
        solution: fixed.kernel,
        fails,
        check: Box::new(check),
    }
}

/// [`write_it`] for a device function the kernel calls: `function`'s body is replaced by the
/// TODO and `stub` (a `return` that lets the file compile).
pub fn write_function<K>(
    reference: &'static Variant<K>,
    function: &'static str,
    todo: &'static str,
    stub: &'static str,
    check: impl Check + 'static,
) -> Exercise {
    let mut exercise = write_it(reference, todo, check);
    exercise.start = crate::exercise::Start::Write {
        reference: reference.kernel,
        function,
        todo,
        stub,
    };
    exercise
}

/// The fields every write-it exercise shares: it starts from the chapter's `reference` kernel
/// with the body of its entry replaced by `// TODO: {todo}`, and the reference solves it.
pub fn write_it<K>(
    reference: &'static Variant<K>,
    todo: &'static str,
    check: impl Check + 'static,
) -> Exercise {
    Exercise {
        name: reference.name,
        chapter: Chapter::Map,
        number: 0,
        title: "",
        statement: "",
        hints: &[],
        part_fixed: &[],
        taught: "",
        start: crate::exercise::Start::Write {
            reference: reference.kernel,
            function: reference.kernel.entry,
            todo,
            stub: "",
        },
        solution: reference.kernel,
        fails: crate::exercise::Fails::wrong_result(),
        check: Box::new(check),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::{Options, check_source};

    /// An exercise is found by its file as a shell or an editor names it, and only by a whole
    /// file name: a name's tail is no file.
    #[test]
    fn an_exercise_is_found_by_its_file() {
        let exercise = &track()[0];
        let path = exercise.path();
        let file = path.rsplit('/').next().expect("a file name");
        for given in [
            path.clone(),
            format!("./{path}"),
            file.to_string(),
            format!("./{file}"),
            format!("/home/learner/racetrack/{path}"),
        ] {
            assert_eq!(find(&given).map(|e| e.name), Ok(exercise.name), "{given}");
        }
        assert!(find(&file[3..]).is_err(), "{}", &file[3..]);
        assert!(find("exercises/ch1_map/99_nothing.cu").is_err());
        // every file is named as its exercise, whatever the chapter's kernel file is called
        for exercise in track() {
            assert!(
                exercise
                    .path()
                    .ends_with(&format!("_{}.cu", exercise.name.replace('-', "_"))),
                "{}",
                exercise.path()
            );
        }
    }

    /// The write-it path end to end, on a chapter kernel that is not (yet) a write-it exercise:
    /// the emptied kernel compiles and fails with a wrong result, the reference passes.
    #[test]
    fn a_write_it_exercise_starts_empty_and_its_reference_passes() {
        harness::testing::require_nvrtc();
        let mut exercise = Exercise {
            title: "Scale a vector",
            statement: "y = a · x, one thread per element.",
            ..write_it(
                ch1_map::variant("scalar-multiply"),
                "y[i] = a * x[i] for the thread's i, if i < n",
                ch1::ScalarMultiply,
            )
        };
        exercise.number = 9;
        let text = exercise.starting_text();
        assert!(
            text.contains("{\n    // TODO: y[i] = a * x[i] for the thread's i, if i < n\n}"),
            "{text}"
        );
        assert!(
            text.contains("// Launch:"),
            "a kernel to write keeps its header: {text}"
        );
        assert_eq!(exercise.path(), "exercises/ch1_map/09_scalar_multiply.cu");
        let options = Options {
            backend: harness::BackendChoice::Emu,
        };
        let start = check_source(&exercise, &text, options);
        let failure = start.outcome.expect_err("an empty kernel cannot pass");
        assert_eq!(failure.expect(), Some(Expect::WrongResult), "{failure:?}");
        let solved = check_source(&exercise, exercise.solution.source, options);
        assert!(solved.passed(), "{:?}", solved.outcome);
        let screen = crate::render::report_lines(&solved, &exercise).join("\n");
        assert!(
            screen.contains("What writing it taught:") && !screen.contains("the fix"),
            "nothing was fixed: {screen}"
        );
    }
}
