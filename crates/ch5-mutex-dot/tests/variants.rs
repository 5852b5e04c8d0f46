//! Every FIXED variant matches the CPU on generated inputs, launch shapes and schedules; every
//! BROKEN one fails the way its `Expect` says, on generated cases, not hand-picked ones.

mod common;

use std::cell::RefCell;

use ch5_mutex_dot::walkthrough::DOT_SHAPE;
use ch5_mutex_dot::{
    Data, DotCheck, LOOSE_RELATIVE_TOLERANCE, VARIANTS, dot_depth, run_dot, run_increment,
    run_lock_order, variant, vectors,
};
use common::{any_threads, blocks, cases, data, device, length, power_of_two_threads, schedule};
use harness::verify::bounds;
use harness::{Device, EmuSettings, Expect, LaunchShape, Schedule};
use proptest::prelude::*;
use proptest::test_runner::{TestError, TestRunner};

#[test]
fn kernel_files_present_their_variant() {
    let problems = harness::variant::registry_problems(VARIANTS);
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    assert_eq!(VARIANTS.len(), 10);
}

fn set_schedule(device: &mut Device, schedule: Schedule) {
    device.set_emu_settings(EmuSettings {
        schedule,
        ..EmuSettings::default()
    });
}

fn fail(error: harness::HarnessError) -> TestCaseError {
    TestCaseError::fail(error.to_string())
}

/// The lock excludes: on any grid, block size and schedule, every block appends itself to the
/// list exactly once, and racecheck sees the fences and atomics order the critical sections.
#[test]
fn lock_unlock_lets_one_block_in_at_a_time() {
    let cell = RefCell::new(device());
    let is_cuda = cell.borrow().kind().is_cuda();
    let lock_unlock = variant("lock-unlock");
    let mut runner = TestRunner::new(cases(is_cuda, 64, 24, file!()));
    runner
        .run(
            &(blocks(is_cuda), any_threads(), schedule()),
            |(blocks, threads, schedule)| {
                let device = &mut *cell.borrow_mut();
                set_schedule(device, schedule);
                let shape = LaunchShape::linear(blocks, threads);
                let outcome = run_lock_order(device, lock_unlock, shape).map_err(fail)?;
                prop_assert!(
                    outcome.result.is_complete(blocks),
                    "{shape} {schedule:?}: {:?}",
                    outcome.result
                );
                prop_assert!(outcome.report.is_clean(), "{:#?}", outcome.report.findings);
                Ok(())
            },
        )
        .unwrap();
}

#[test]
fn mutex_increment_counts_every_block() {
    let cell = RefCell::new(device());
    let is_cuda = cell.borrow().kind().is_cuda();
    let increment = variant("mutex-increment");
    let mut runner = TestRunner::new(cases(is_cuda, 64, 24, file!()));
    runner
        .run(
            &(blocks(is_cuda), any_threads(), schedule()),
            |(blocks, threads, schedule)| {
                let device = &mut *cell.borrow_mut();
                set_schedule(device, schedule);
                let shape = LaunchShape::linear(blocks, threads);
                let outcome = run_increment(device, increment, shape).map_err(fail)?;
                prop_assert_eq!(i64::from(outcome.result), i64::from(blocks));
                prop_assert!(outcome.report.is_clean(), "{:#?}", outcome.report.findings);
                Ok(())
            },
        )
        .unwrap();
}

/// `Race`: racecheck names the `// BUG:` line, and proptest finds a grid and schedule on which
/// blocks got in together and the count came out wrong. On a GPU only the count can show it.
#[test]
fn read_then_write_lock_loses_updates_and_racecheck_names_its_line() {
    let cell = RefCell::new(device());
    let is_cuda = cell.borrow().kind().is_cuda();
    let broken = variant("read-then-write-lock");
    assert_eq!(broken.expect, Expect::Race);
    if !is_cuda {
        let outcome =
            run_increment(&mut cell.borrow_mut(), broken, ch5_mutex_dot::LOCK_SHAPE).unwrap();
        assert!(
            broken
                .expect
                .is_shown_by(&outcome.report.findings, broken.bug_line()),
            "racecheck did not name {}: {:#?}",
            broken.bug_location().unwrap_or_default(),
            outcome.report.findings
        );
    }
    let mut config = cases(is_cuda, 64, 32, file!());
    config.failure_persistence = None;
    let mut runner = TestRunner::new(config);
    let result = runner.run(
        &(
            2u32..=if is_cuda { 4096 } else { 48 },
            any_threads(),
            schedule(),
        ),
        |(blocks, threads, schedule)| {
            let device = &mut *cell.borrow_mut();
            set_schedule(device, schedule);
            let outcome = run_increment(device, broken, LaunchShape::linear(blocks, threads))
                .map_err(fail)?;
            prop_assert_eq!(i64::from(outcome.result), i64::from(blocks));
            Ok(())
        },
    );
    match result {
        Err(TestError::Fail(reason, case)) => {
            eprintln!("counterexample found, as documented: {case:?}: {reason}")
        }
        other => panic!(
            "no generated case showed {} losing an update on {}: {other:?}",
            broken.name,
            cell.borrow().banner()
        ),
    }
}

#[test]
fn fixed_dot_products_match_the_cpu_within_the_bound() {
    let cell = RefCell::new(device());
    let is_cuda = cell.borrow().kind().is_cuda();
    let largest = if is_cuda { 16_000_000 } else { 300_000 };
    let strategy = (
        length(largest),
        data(),
        any::<u64>(),
        blocks(is_cuda),
        power_of_two_threads(),
        schedule(),
    );
    for fixed in VARIANTS
        .iter()
        .filter(|v| v.expect.is_correct() && v.kind.is_dot())
    {
        let mut runner = TestRunner::new(cases(is_cuda, 64, 20, file!()));
        runner
            .run(&strategy, |(len, data, seed, blocks, threads, schedule)| {
                let (a, b) = vectors(len, data, seed);
                let threads = threads.max(fixed.kind.min_threads());
                let shape = LaunchShape::linear(blocks, threads);
                let device = &mut *cell.borrow_mut();
                set_schedule(device, schedule);
                let outcome = run_dot(device, fixed, &a, &b, shape).map_err(fail)?;
                let check = DotCheck::for_step(fixed.kind, outcome.result, &a, &b, shape);
                prop_assert!(
                    check.is_within(),
                    "{} on {shape}, {data:?}, {schedule:?}: {check}",
                    fixed.name
                );
                prop_assert!(
                    outcome.report.is_clean(),
                    "{}: {:#?}",
                    fixed.name,
                    outcome.report.findings
                );
                Ok(())
            })
            .unwrap_or_else(|error| panic!("{}: {error}", fixed.name));
    }
}

/// The honest tolerance is tight enough: at the walk-through's shape and a million values, the
/// bound is far below the few tenths of a percent the typo costs, which a guessed 1e-2 is not.
#[test]
fn the_bound_is_far_below_a_typo_and_a_guessed_tolerance_is_not() {
    let depth = dot_depth(1 << 22, DOT_SHAPE);
    let gamma = bounds::gamma_f32(depth + 1);
    assert!(
        gamma < 1e-3 / 20.0,
        "depth {depth}: γ = {gamma:.2e} is too loose to tell a 0.1% error from rounding"
    );
    // and the guessed tolerance is wider than the typo's few tenths of a percent
    const { assert!(LOOSE_RELATIVE_TOLERANCE > 3e-3) };
}

/// The typo on real data: a guessed relative tolerance of 1e-2 lets it through, the bound
/// derived from the summation error does not, and the fixed kernel on the same input passes
/// that same bound. Three sizes, so the point does not rest on one lucky input.
#[test]
fn the_typo_passes_a_guessed_tolerance_but_not_the_bound() {
    let mut device = device();
    let typo = variant("partial-dot-typo");
    let fixed = variant("partial-dot");
    assert_eq!(typo.expect, Expect::WrongResult);
    for (len, seed) in [(1 << 20, 2), (3_000_017, 3), (1 << 22, 4)] {
        let (a, b) = vectors(len, Data::Positive, seed);
        let broken = run_dot(&mut device, typo, &a, &b, DOT_SHAPE).unwrap();
        let check = DotCheck::new(broken.result, &a, &b, DOT_SHAPE);
        assert!(
            check.passes_loose_tolerance(),
            "{len} values: the typo is off by more than 1e-2 here, which would hide nothing: {check}"
        );
        assert!(
            !check.is_within(),
            "{len} values: the bound let the typo pass: {check}"
        );
        let right = run_dot(&mut device, fixed, &a, &b, DOT_SHAPE).unwrap();
        let check = DotCheck::new(right.result, &a, &b, DOT_SHAPE);
        assert!(check.is_within(), "{len} values: {check}");
    }
}

/// `WrongResult`: proptest searches sizes, data and launch shapes, and must find a case the
/// bound rejects.
#[test]
fn the_typo_is_shown_wrong_by_a_generated_case() {
    let cell = RefCell::new(device());
    let is_cuda = cell.borrow().kind().is_cuda();
    let typo = variant("partial-dot-typo");
    let strategy = (
        length(200_000),
        data(),
        any::<u64>(),
        1u32..=16,
        power_of_two_threads(),
    );
    let mut config = cases(is_cuda, 64, 32, file!());
    config.failure_persistence = None;
    let mut runner = TestRunner::new(config);
    let result = runner.run(&strategy, |(len, data, seed, blocks, threads)| {
        let (a, b) = vectors(len, data, seed);
        let shape = LaunchShape::linear(blocks, threads);
        let outcome = run_dot(&mut cell.borrow_mut(), typo, &a, &b, shape).map_err(fail)?;
        let check = DotCheck::new(outcome.result, &a, &b, shape);
        prop_assert!(check.is_within(), "{shape}, {data:?}: {check}");
        Ok(())
    });
    match result {
        Err(TestError::Fail(reason, case)) => {
            eprintln!("counterexample found, as documented: {case:?}: {reason}")
        }
        other => panic!("no generated case showed {} wrong: {other:?}", typo.name),
    }
}

#[test]
fn launches_the_dot_kernels_cannot_take_are_refused_in_one_sentence() {
    let mut device = device();
    let (a, b) = vectors(100, Data::Signed, 5);
    for (shape, expected) in [
        (
            LaunchShape::linear(4, 96),
            "the dot kernels need a power-of-two block of at most 1024 threads, not 96",
        ),
        (
            LaunchShape::linear(1, 2048),
            "the dot kernels need a power-of-two block of at most 1024 threads, not 2048",
        ),
    ] {
        let error = run_dot(&mut device, variant("dot-mutex"), &a, &b, shape)
            .unwrap_err()
            .to_string();
        assert!(error.contains(expected), "{error}");
        assert!(!error.contains('\n'), "{error}");
    }
    let error = run_dot(
        &mut device,
        variant("dot-warp-shuffle"),
        &a,
        &b,
        LaunchShape::linear(4, 16),
    )
    .unwrap_err()
    .to_string();
    assert_eq!(
        error,
        "dot-warp-shuffle adds with warp shuffles and needs blocks of at least 32 threads, not 16"
    );
    let error = run_dot(&mut device, variant("partial-dot"), &a, &b[..99], DOT_SHAPE)
        .unwrap_err()
        .to_string();
    assert!(error.contains("needs equal lengths"), "{error}");
    let error = run_increment(
        &mut device,
        variant("mutex-increment"),
        LaunchShape::linear(1, 1025),
    )
    .unwrap_err()
    .to_string();
    assert!(
        error.starts_with("cannot launch mutex_increment with grid 1 × block 1025:"),
        "{error}"
    );
}
