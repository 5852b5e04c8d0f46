//! The halo stencil matches the CPU exactly on generated grids (narrower than a block, sizes no
//! block divides) under every schedule, with the checkers silent; the tile without its halo is
//! shown wrong by a generated grid, and initcheck names the line that reads the halo.

mod common;

use std::cell::RefCell;

use ch3_life::stencil::{KERNELS, cells, run, stencil_cpu, variant};
use common::{cases, device, schedule, side};
use harness::HarnessError;
use harness::verify::compare_exact;
use proptest::prelude::*;
use proptest::test_runner::{TestError, TestRunner};

fn fail(error: HarnessError) -> TestCaseError {
    TestCaseError::fail(error.to_string())
}

#[test]
fn kernel_files_present_their_variant() {
    let problems = harness::variant::registry_problems(KERNELS);
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn the_halo_stencil_matches_the_cpu_on_any_grid_and_schedule() {
    let cell = RefCell::new(device());
    let is_cuda = cell.borrow().kind().is_cuda();
    let largest = if is_cuda { 1_000 } else { 70 };
    let fixed = variant("stencil-halo");
    let strategy = (side(largest), side(largest), any::<u64>(), schedule());
    let mut runner = TestRunner::new(cases(is_cuda, 64, 32, file!()));
    runner
        .run(&strategy, |(width, height, seed, schedule)| {
            let grid = cells((width * height) as usize, seed);
            let outcome = cell
                .borrow_mut()
                .with_schedule(schedule, |device| run(device, fixed, &grid, width, height))
                .map_err(fail)?;
            let comparison = compare_exact(
                &outcome.result,
                &stencil_cpu(&grid, width as usize, height as usize),
            );
            prop_assert!(comparison.is_match(), "{width} × {height}: {comparison}");
            prop_assert!(outcome.report.is_clean(), "{:?}", outcome.report.findings);
            Ok(())
        })
        .unwrap();
}

#[test]
fn a_tile_without_its_halo_is_shown_wrong_by_a_generated_grid() {
    let cell = RefCell::new(device());
    let broken = variant("stencil-no-halo");
    let strategy = (side(40), side(40), any::<u64>());
    let mut runner = TestRunner::new(cases(false, 16, 16, file!()));
    let result = runner.run(&strategy, |(width, height, seed)| {
        let grid = cells((width * height) as usize, seed);
        let outcome = run(&mut cell.borrow_mut(), broken, &grid, width, height).map_err(fail)?;
        let comparison = compare_exact(
            &outcome.result,
            &stencil_cpu(&grid, width as usize, height as usize),
        );
        prop_assert!(comparison.is_match(), "{width} × {height}: {comparison}");
        Ok(())
    });
    assert!(
        matches!(result, Err(TestError::Fail(..))),
        "no generated grid showed the missing halo: {result:?}"
    );
}

#[test]
fn initcheck_names_the_line_that_reads_the_halo_nobody_loaded() {
    let mut device = device();
    if device.kind().is_cuda() {
        return; // initcheck is the emulator's
    }
    let broken = variant("stencil-no-halo");
    let (width, height) = (20, 20);
    let grid = cells((width * height) as usize, 7);
    let outcome = run(&mut device, broken, &grid, width, height).unwrap();
    let line = broken.bug_line().expect("a // BUG: line");
    assert!(
        outcome.report.findings.iter().any(|f| {
            matches!(f.kind, harness::FindingKind::UninitializedRead { .. })
                && f.lines().contains(&line)
        }),
        "{:?}",
        outcome.report.findings
    );
}
