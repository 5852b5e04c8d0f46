//! The differential tests of the compiled tier: every committed kernel (the check corpus and
//! every chapter's kernels and variants), every entry, every schedule, run by the interpreter
//! and by the compiled tier, must end with the same report (values, findings in their order
//! and counts, watchdog verdicts, thread-instruction counts) and the same memory.
//!
//! CI runs every `SAMPLE`th file; `RACETRACK_DIFF_FULL=1` runs them all.

#![allow(clippy::unwrap_used)]

use crate::compiled::Engine;
use crate::exec::REGIONS_RUN;
use crate::module::Module;
use crate::options::RunOptions;

/// One file in this many is run unless `RACETRACK_DIFF_FULL` is set.
const SAMPLE: usize = 7;

fn sample() -> usize {
    if std::env::var_os("RACETRACK_DIFF_FULL").is_some() {
        1
    } else {
        SAMPLE
    }
}

/// Interpreter against compiled tier with `options`; returns (launches, regions run).
fn compare(what: &str, blocks: u32, options: impl Fn(RunOptions) -> RunOptions) -> (usize, u64) {
    let before = REGIONS_RUN.with(|r| r.get());
    let parse = |ptx: &str| Some((Module::parse(ptx).ok()?, Module::parse(ptx).ok()?));
    let launches = crate::committed::runs_alike_sampled(what, blocks, sample(), parse, |o| {
        let o = options(o);
        (
            RunOptions {
                engine: Engine::Interp,
                ..o
            },
            RunOptions {
                engine: Engine::Compiled,
                ..o
            },
        )
    });
    (launches, REGIONS_RUN.with(|r| r.get()) - before)
}

/// One core, every checker: the same reports and memory on every schedule.
#[test]
fn every_committed_kernel_runs_alike_interpreted_and_compiled() {
    let (launches, regions) = compare("the compiled tier (one core)", 2, |o| RunOptions {
        threads: 1,
        ..o
    });
    eprintln!("{launches} launches, {regions} regions run compiled");
    assert!(launches > 300 / sample(), "{launches} launches");
    // Not vacuous: the compiled tier ran a great many regions.
    assert!(regions > 10_000 / sample() as u64, "{regions} regions run");
}

/// Three cores and a watchdog that looks every few rounds, so that regions meet the turns'
/// segment ends and the watchdog's looks (whose register hashes must be the interpreter's), and
/// no checkers, so that most rounds run on the workers.
#[test]
fn every_committed_kernel_runs_alike_interpreted_and_compiled_on_several_cores() {
    let (launches, regions) = compare("the compiled tier (three cores)", 5, |o| RunOptions {
        threads: 3,
        racecheck: false,
        synccheck: false,
        memcheck: false,
        initcheck: false,
        resident_threads: 3 * 96,
        watchdog_window: 4096,
        ..o
    });
    // Regions run on the workers too, whose counts this thread does not see.
    eprintln!("{launches} launches, {regions} regions run compiled on the launching thread");
    assert!(launches > 300 / sample(), "{launches} launches");
}
