//! The compaction keeps exactly the nonzero values, in order, on generated lengths (empty, one
//! tile, many, ragged), densities of zeros (none, all, between) and blocks, under every
//! schedule, with the checkers silent.

mod common;

use std::cell::RefCell;

use ch6_scans::compact::{KERNELS, compact_cpu, run, values, variant};
use common::{cases, device, length, schedule};
use harness::verify::compare_exact;
use proptest::prelude::*;
use proptest::test_runner::TestRunner;

#[test]
fn kernel_files_present_their_variant() {
    let problems = harness::variant::registry_problems(KERNELS);
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn compaction_keeps_the_nonzero_values_in_order() {
    let cell = RefCell::new(device());
    let is_cuda = cell.borrow().kind().is_cuda();
    let largest = if is_cuda { 4_000_000 } else { 6_000 };
    let fixed = variant("compact-tiles");
    let zeros = prop_oneof![Just(0.0), Just(1.0), 0.0f64..1.0];
    let threads = prop_oneof![
        prop::sample::select(vec![32u32, 64, 256, 1024]),
        1u32..=1024
    ];
    let strategy = (
        length(largest).prop_map(move |n| n.min(largest)),
        zeros,
        any::<u64>(),
        threads,
        schedule(),
    );
    let mut runner = TestRunner::new(cases(is_cuda, 64, 32, file!()));
    runner
        .run(&strategy, |(n, zeros, seed, threads, schedule)| {
            let x = values(n, zeros, seed);
            let outcome = cell
                .borrow_mut()
                .with_schedule(schedule, |device| run(device, fixed, &x, threads))
                .map_err(|error| TestCaseError::fail(error.to_string()))?;
            let comparison = compare_exact(&outcome.result, &compact_cpu(&x));
            prop_assert!(
                comparison.is_match(),
                "{n} values, {threads} threads: {comparison}"
            );
            prop_assert!(outcome.report.is_clean(), "{:?}", outcome.report.findings);
            Ok(())
        })
        .unwrap();
}
