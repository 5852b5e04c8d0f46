//! The fixed sample of bench/indigo's Indigo-style suite (every `int` code on four graphs)
//! through the `racetrack` binary: every planted bug the oracle sees happen is found, nothing is
//! reported where no bug can happen, and nothing fails. The scoreboard is a snapshot, so a
//! change in what the checkers find shows up as a diff.

use std::time::Duration;

use harness::ptx::workspace_binary;
use harness::testing::{require_nvrtc, scratch_dir};
use indigo::code::{Bug, all_codes};
use indigo::graph::all_graphs;
use indigo::run::{RunOptions, Suite};
use indigo::{pairs, table};

#[test]
fn the_indigo_sample_finds_every_planted_bug_that_happens_and_nothing_else() {
    require_nvrtc();
    let dir = scratch_dir("indigo-sample");
    let suite = match Suite::write(&dir, all_codes(), all_graphs()) {
        Ok(suite) => suite,
        Err(error) => panic!("{error}"),
    };
    let pairs = pairs(&suite.codes, &suite.graphs, true);
    let racetrack = workspace_binary(env!("CARGO_BIN_EXE_racetrack"));
    let jobs = std::thread::available_parallelism().map_or(1, usize::from);
    let options = RunOptions {
        timeout: Duration::from_secs(120),
        check_flags: Vec::new(),
    };
    let runs = match suite.run(&racetrack, &pairs, jobs, &options, |_| {}) {
        Ok(runs) => runs,
        Err(error) => panic!("{error}"),
    };
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(runs.len(), pairs.len());
    let surprises = table::surprises(&runs);
    assert!(surprises.is_empty(), "{}", surprises.join("\n"));
    for bug in [Bug::Race, Bug::AtomicBug, Bug::SyncBug, Bug::BoundsBug] {
        let score = table::score(&runs, bug);
        assert!(
            score.runs_happening > 0 && score.runs_happening < score.runs,
            "the sample should hold {} runs where the bug happens and runs where it does not: {score:?}",
            bug.name()
        );
    }
    insta::assert_snapshot!("scoreboard", table::markdown(&runs));
}
