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

/// The exercise called `name`.
pub fn find(name: &str) -> Result<&'static Exercise, String> {
    track()
        .iter()
        .find(|exercise| exercise.name == name)
        .ok_or_else(|| format!("there is no exercise `{name}`; `cargo learn list` names them all"))
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
        taught: "",
        start: crate::exercise::Start::Fix(broken.kernel),
        solution: fixed.kernel,
        fails,
        check: Box::new(check),
    }
}
