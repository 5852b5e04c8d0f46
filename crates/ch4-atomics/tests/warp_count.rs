//! The warp count: the fixed kernel matches the CPU on generated sizes, grids and blocks under
//! every schedule, the lanes schedule included, with the checkers silent; the broken one is
//! silent where warps move in lockstep and raced at its `// BUG:` line where lanes run apart.

mod common;

use std::cell::RefCell;

use ch4_atomics::warp_count::{KERNELS, input, run, variant, warp_count_cpu};
use common::{cases, device, schedule};
use harness::{LaunchShape, Schedule};
use proptest::prelude::*;
use proptest::test_runner::TestRunner;

fn warps_per_block() -> impl Strategy<Value = u32> {
    1u32..=8
}

#[test]
fn kernel_files_present_their_variant() {
    let problems = harness::variant::registry_problems(KERNELS);
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn the_fixed_count_matches_the_cpu_on_every_schedule_lanes_included() {
    let cell = RefCell::new(device());
    let is_cuda = cell.borrow().kind().is_cuda();
    // The chapter's schedules, the lanes schedule among them.
    let strategy = (
        0usize..3_000,
        any::<u64>(),
        1u32..=6,
        warps_per_block(),
        schedule(),
    );
    let fixed = variant("warp-count");
    let mut runner = TestRunner::new(cases(is_cuda, 64, 24, file!()));
    runner
        .run(&strategy, |(n, seed, blocks, warps, schedule)| {
            let data = input(n, seed);
            let shape = LaunchShape::linear(blocks, warps * 32);
            let outcome = cell
                .borrow_mut()
                .with_schedule(schedule, |device| run(device, fixed, &data, 0.5, shape))
                .map_err(|e| TestCaseError::fail(e.to_string()))?;
            prop_assert_eq!(&outcome.counts, &warp_count_cpu(&data, 0.5, shape));
            prop_assert!(
                outcome.report.is_clean(),
                "{schedule:?}: {:?}",
                outcome.report.findings
            );
            Ok(())
        })
        .unwrap_or_else(|error| panic!("{error}"));
}

#[test]
fn lockstep_hides_the_broken_counts_race_and_the_lanes_schedule_reports_it() {
    let mut device = device();
    if device.kind().is_cuda() {
        return;
    }
    let broken = variant("warp-count-no-syncwarp");
    let bug_line = broken.bug_line();
    let data = input(1_000, 7);
    let shape = LaunchShape::linear(2, 128);
    for schedule in [
        Schedule::Hardware,
        Schedule::Random { seed: 7 },
        Schedule::Adversarial { seed: 7 },
    ] {
        let outcome = device
            .with_schedule(schedule, |device| run(device, broken, &data, 0.5, shape))
            .expect("a launch");
        assert!(
            outcome.report.is_clean(),
            "{schedule:?}: lockstep orders the read: {:?}",
            outcome.report.findings
        );
    }
    let reported = (0..8)
        .filter(|&seed| {
            let outcome = device
                .with_schedule(Schedule::Lanes { seed }, |device| {
                    run(device, broken, &data, 0.5, shape)
                })
                .expect("a launch");
            broken
                .expect
                .is_shown_by(&outcome.report.findings, bug_line)
        })
        .count();
    // Each of the grid's eight warps splits at random: a seed misses only when none of them
    // lets lane 31 run ahead of a lane that has not added yet.
    assert!(
        reported >= 6,
        "the lanes schedule reported it on {reported} of 8 seeds"
    );
}
