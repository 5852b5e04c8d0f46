//! `cargo learn`: Racetrack's exercise track. The learner edits kernels in `exercises/`; a check
//! compiles the file with NVRTC, runs it on generated inputs and launch shapes against the
//! chapter's CPU reference on the emulator (hardware, random, adversarial and lanes schedules, with
//! racecheck, synccheck, memcheck and initcheck on), then on a GPU when there is one, and says why it is
//! still broken: the smallest failing case, the checker's report at a line of the learner's
//! file, or NVRTC's log.
//!
//! The track reuses the chapters: a "fix it" exercise starts from a chapter's broken kernel and
//! is solved by its fixed one; the inputs come from the chapter's `testing` strategies, the
//! launches from its `run_*` functions, the answers from its CPU references. No chapter depends
//! on this crate, and the harness knows nothing of it.
//!
//! # Where the starting text lives
//!
//! Nowhere but in the chapters' kernels. [`Exercise::starting_text`] makes it from the
//! chapter's kernel file (embedded at build time by the chapter crate) and the exercise's
//! statement: the kernel's `// BROKEN…` label, its `// BUG:` comments and its book anchors are
//! removed, and a header with the statement takes the label's place. `cargo learn` writes the
//! files it does not find under `exercises/` (git-ignored, so the learner's edits are theirs)
//! and `cargo learn reset NAME` writes one again.
//!
//! # Adding an exercise
//!
//! Exercises are listed chapter by chapter in `src/track/chN.rs`, in book order; the file name
//! under `exercises/<chapter>/` is numbered by that order. One entry is an [`Exercise`]:
//!
//! - "Fix it": `..track::fix_it(broken_variant, fixed_variant, check, fails)`, where `fails`
//!   says how the starting file must fail (the dev check holds it to that).
//! - "Write it": `..track::write_it(reference_variant, todo, check)`, where the reference is
//!   the chapter's `Correct` kernel that solves it: the starting text is that file with the
//!   body of its entry replaced by `// TODO: {todo}`, and it must fail with a wrong result
//!   (`track::write_function` empties a device function the entry calls instead).
//! - `check`: a [`Check`] from the chapter's module: which kernels the host launches, how, on
//!   which generated cases, and what they are compared with. Reuse one when the kernel has the
//!   signature of an existing variant; write one (a strategy, a run, a comparison, handed to
//!   [`property::run`]) when it does not. Its [`Check::goals`] adds what a right answer is not
//!   enough for ([`goal`]): no bank conflicts worse than N-way, counted by the emulator, and a
//!   speed goal against a chapter kernel, timed on a GPU and skipped with a note on the
//!   emulator.
//! - A statement (what is wrong or what to write, and how the host launches it), two or three
//!   hints from "where to look" to "what to change", and what the fix taught.
//!
//! `cargo test -p learn` then proves the new exercise: its starting file fails as `fails`
//! says and its solution passes, on the emulator.

pub mod check;
pub mod cli;
pub mod exercise;
pub mod goal;
pub mod hint;
pub mod program;
pub mod progress;
pub mod property;
pub mod render;
pub mod track;
pub mod watch;
pub mod workspace;

pub use check::{Check, Failure, Options, Report, check_source};
pub use exercise::{Chapter, Exercise, Fails, Reason, Start};
pub use track::{find, track};
pub use workspace::Workspace;
