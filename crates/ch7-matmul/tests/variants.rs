//! Every FIXED variant matches the f64 CPU reference under the dot-product error bound on
//! generated sizes, blocks and data; every BROKEN one fails the way its `Expect` says, on
//! generated cases, not hand-picked ones.

mod common;

use std::cell::RefCell;

use ch7_matmul::{
    Ch7Variant, Dims, MatmulCheck, Plan, Step, TILE, Tiling, VARIANTS, covering_shape, guard_for,
    matmul_f64, random_matrix, run_matmul, run_pipeline, tiled_2x2_shape, tiled_shape, variant,
};
use common::{block, cases, device, fail, schedule, side};
use harness::{EmuSettings, Expect, Schedule};
use proptest::prelude::*;
use proptest::test_runner::{TestError, TestRunner};

fn inputs(dims: Dims, seed: u64) -> (Vec<f32>, Vec<f32>) {
    (
        random_matrix(dims.a_len(), seed),
        random_matrix(dims.b_len(), seed ^ 0x9e37_79b9),
    )
}

fn largest_side(is_cuda: bool) -> u32 {
    if is_cuda { 300 } else { 64 }
}

#[test]
fn kernel_files_present_their_variant() {
    let problems = harness::variant::registry_problems(VARIANTS);
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    assert_eq!(VARIANTS.len(), 13);
}

#[test]
fn fixed_kernels_match_the_cpu_on_any_size_and_block() {
    let cell = RefCell::new(device());
    let is_cuda = cell.borrow().kind().is_cuda();
    let largest = largest_side(is_cuda);
    let strategy = (
        side(largest),
        side(largest),
        side(largest),
        block(),
        any::<u64>(),
    );
    for fixed in VARIANTS.iter().filter(|v| {
        v.expect.is_correct() && matches!(v.kind, Step::Naive | Step::Tiled | Step::Tiled2x2)
    }) {
        let mut runner = TestRunner::new(cases(is_cuda, 64, 32, file!()));
        runner
            .run(&strategy, |(m, n, k, block, seed)| {
                let dims = Dims::new(m, n, k);
                let shape = match fixed.kind {
                    Step::Naive => covering_shape(dims, block),
                    Step::Tiled2x2 => tiled_2x2_shape(dims),
                    _ => tiled_shape(dims),
                };
                let (a, b) = inputs(dims, seed);
                let (want, scale) = matmul_f64(&a, &b, dims);
                let outcome = run_matmul(&mut cell.borrow_mut(), fixed, &a, &b, dims, shape, 0)
                    .map_err(fail)?;
                let check = MatmulCheck::new(&outcome.result, &want, &scale, k);
                prop_assert!(check.is_match(), "{} {dims} {shape}: {check}", fixed.name);
                prop_assert!(
                    outcome.report.is_clean(),
                    "{}: {:?}",
                    fixed.name,
                    outcome.report.findings
                );
                Ok(())
            })
            .unwrap_or_else(|error| panic!("{}: {error}", fixed.name));
    }
}

fn climb() -> impl Iterator<Item = (&'static Ch7Variant, Tiling)> {
    VARIANTS.iter().filter_map(|v| match v.kind {
        Step::Climb(tiling) => Some((v, tiling)),
        _ => None,
    })
}

/// The climb's sizes: multiples of the tile, one or two tiles of C a side and one to three
/// steps along K on the emulator (a 128 × 128 tile is already 16,384 elements), up to 4 tiles
/// and 16 steps on a GPU, where the f64 reference on the CPU is the slow part; the loads,
/// barriers and double buffers all cycle.
fn climb_dims(tiling: Tiling, is_cuda: bool) -> impl Strategy<Value = Dims> {
    let tiles = if is_cuda { 4u32 } else { 2 };
    let steps = if is_cuda { 16u32 } else { 3 };
    (1..=tiles, 1..=tiles, 1..=steps).prop_map(move |(m, n, k)| {
        Dims::new(m * tiling.tile_m, n * tiling.tile_n, k * tiling.tile_k)
    })
}

/// Every climb kernel on every size it allows (multiples of its tile): the f64 reference under
/// the same bound as the other kernels, and silent checkers under the schedule drawn.
#[test]
fn climb_kernels_match_the_cpu_on_every_size_they_allow() {
    let cell = RefCell::new(device());
    let is_cuda = cell.borrow().kind().is_cuda();
    for (fixed, tiling) in climb() {
        let mut runner = TestRunner::new(cases(is_cuda, 32, 4, file!()));
        runner
            .run(
                &(climb_dims(tiling, is_cuda), schedule(), any::<u64>()),
                |(dims, schedule, seed)| {
                    let (a, b) = inputs(dims, seed);
                    let (want, scale) = matmul_f64(&a, &b, dims);
                    let device = &mut *cell.borrow_mut();
                    let outcome = device
                        .with_schedule(schedule, |device| {
                            run_matmul(device, fixed, &a, &b, dims, tiling.shape(dims), 0)
                        })
                        .map_err(fail)?;
                    let check = MatmulCheck::new(&outcome.result, &want, &scale, dims.k);
                    prop_assert!(
                        check.is_match(),
                        "{} {dims} {schedule:?}: {check}",
                        fixed.name
                    );
                    prop_assert!(
                        outcome.report.is_clean(),
                        "{} {schedule:?}: {:?}",
                        fixed.name,
                        outcome.report.findings
                    );
                    Ok(())
                },
            )
            .unwrap_or_else(|error| panic!("{}: {error}", fixed.name));
    }
}

/// Whatever proptest draws, each climb kernel also runs once under each of the emulator's
/// three schedules, with a K of three steps (two buffer swaps).
#[test]
fn climb_kernels_are_right_and_silent_under_every_schedule() {
    let mut device = device();
    if device.kind().is_cuda() {
        eprintln!("the schedules are the emulator's; the GPU cases run in the test above");
        return;
    }
    for (fixed, tiling) in climb() {
        let dims = Dims::new(tiling.tile_m, tiling.tile_n, 3 * tiling.tile_k);
        let (a, b) = inputs(dims, 11);
        let (want, scale) = matmul_f64(&a, &b, dims);
        for schedule in [
            Schedule::Hardware,
            Schedule::Random { seed: 7 },
            Schedule::Adversarial { seed: 7 },
        ] {
            let outcome = device
                .with_schedule(schedule, |device| {
                    run_matmul(device, fixed, &a, &b, dims, tiling.shape(dims), 0)
                })
                .unwrap();
            let check = MatmulCheck::new(&outcome.result, &want, &scale, dims.k);
            assert!(check.is_match(), "{} {schedule:?}: {check}", fixed.name);
            assert!(
                outcome.report.is_clean(),
                "{} {schedule:?}: {:?}",
                fixed.name,
                outcome.report.findings
            );
        }
    }
}

/// The climb kernels have no bounds checks, so the host refuses what they do not allow.
#[test]
fn climb_kernels_refuse_sizes_and_launches_they_do_not_allow() {
    let mut device = device();
    for (fixed, tiling) in climb() {
        for dims in [
            Dims::new(tiling.tile_m + 1, tiling.tile_n, tiling.tile_k),
            Dims::new(tiling.tile_m, tiling.tile_n / 2, tiling.tile_k),
            Dims::new(tiling.tile_m, tiling.tile_n, tiling.tile_k + 4),
        ] {
            let (a, b) = inputs(dims, 1);
            let error = run_matmul(&mut device, fixed, &a, &b, dims, tiled_shape(dims), 0)
                .unwrap_err()
                .to_string();
            assert_eq!(
                error,
                format!(
                    "{} needs M and N multiples of {} and {} and K a multiple of {}, which {dims} is not",
                    fixed.name, tiling.tile_m, tiling.tile_n, tiling.tile_k
                )
            );
        }
        let dims = Dims::new(tiling.tile_m, tiling.tile_n, tiling.tile_k);
        let (a, b) = inputs(dims, 1);
        let error = run_matmul(&mut device, fixed, &a, &b, dims, tiled_shape(dims), 0)
            .unwrap_err()
            .to_string();
        assert!(error.contains("runs only as"), "{error}");
    }
}

#[test]
fn the_pipeline_matches_the_cpu_for_any_chunks_and_streams() {
    let cell = RefCell::new(device());
    let is_cuda = cell.borrow().kind().is_cuda();
    let largest = largest_side(is_cuda);
    let pipeline = variant("pipeline");
    let strategy = (
        side(largest),
        side(largest),
        side(largest),
        1u32..=12,
        1u32..=5,
        any::<u64>(),
    );
    let mut runner = TestRunner::new(cases(is_cuda, 48, 24, file!()));
    runner
        .run(&strategy, |(m, n, k, chunks, streams, seed)| {
            let dims = Dims::new(m, n, k);
            let plan = Plan { chunks, streams };
            let (a, b) = inputs(dims, seed);
            let (want, scale) = matmul_f64(&a, &b, dims);
            let outcome =
                run_pipeline(&mut cell.borrow_mut(), pipeline, &a, &b, dims, plan).map_err(fail)?;
            let check = MatmulCheck::new(&outcome.result, &want, &scale, k);
            prop_assert!(check.is_match(), "{dims}, {plan}: {check}");
            prop_assert!(outcome.report.is_clean(), "{:?}", outcome.report.findings);
            Ok(())
        })
        .unwrap();
}

#[test]
fn bad_sizes_blocks_and_plans_are_refused_in_one_sentence() {
    let mut device = device();
    let dims = Dims::new(3, 4, 5);
    let (a, b) = inputs(dims, 1);
    let tiled = variant("tiled");
    let error = run_matmul(
        &mut device,
        tiled,
        &a,
        &b,
        dims,
        covering_shape(dims, (8, 8)),
        0,
    )
    .unwrap_err()
    .to_string();
    assert_eq!(
        error,
        "tiled needs blocks of exactly (16, 16) threads, not (8, 8)"
    );
    let error = run_matmul(&mut device, tiled, &a[1..], &b, dims, tiled_shape(dims), 0)
        .unwrap_err()
        .to_string();
    assert!(
        error.contains("needs 15 values of A and 20 of B, not 14 and 20"),
        "{error}"
    );
    let no_streams = Plan {
        chunks: 2,
        streams: 0,
    };
    let error = run_pipeline(&mut device, variant("pipeline"), &a, &b, dims, no_streams)
        .unwrap_err()
        .to_string();
    assert!(
        error.contains("at least one chunk and one stream"),
        "{error}"
    );
    let error = run_matmul(
        &mut device,
        tiled,
        &[],
        &b,
        Dims::new(0, 4, 5),
        tiled_shape(dims),
        0,
    )
    .unwrap_err()
    .to_string();
    assert!(
        error.contains("every dimension must be at least 1"),
        "{error}"
    );
}

/// Whether a launch of `shape` has threads outside the `dims.m × dims.n` of C.
fn overhangs(dims: Dims, shape: harness::LaunchShape) -> bool {
    shape.grid.x * shape.block.x != dims.n || shape.grid.y * shape.block.y != dims.m
}

/// `OutOfBounds`: whenever the grid overhangs C, memcheck names the `// BUG:` line on the
/// emulator, and on a GPU stray writes land in the guard after C; when blocks tile C exactly
/// the same kernel is right and clean, which is how the bug survives round-number tests.
#[test]
fn naive_write_outside_guard_writes_past_c_whenever_the_grid_overhangs() {
    let cell = RefCell::new(device());
    let is_cuda = cell.borrow().kind().is_cuda();
    let broken = variant("naive-write-outside-guard");
    assert_eq!(broken.expect, Expect::OutOfBounds);
    let strategy = (side(32), side(32), side(24), block(), any::<u64>());
    let mut runner = TestRunner::new(cases(is_cuda, 64, 48, file!()));
    runner
        .run(&strategy, |(m, n, k, block, seed)| {
            let dims = Dims::new(m, n, k);
            let shape = covering_shape(dims, block);
            let (a, b) = inputs(dims, seed);
            let device = &mut cell.borrow_mut();
            if is_cuda {
                let guard = guard_for(dims, shape);
                let outcome =
                    run_matmul(device, broken, &a, &b, dims, shape, guard).map_err(fail)?;
                prop_assert_eq!(outcome.guard_written > 0, overhangs(dims, shape));
                return Ok(());
            }
            let outcome = run_matmul(device, broken, &a, &b, dims, shape, 0).map_err(fail)?;
            if overhangs(dims, shape) {
                prop_assert!(
                    broken
                        .expect
                        .is_shown_by(&outcome.report.findings, broken.bug_line()),
                    "memcheck did not name {} for {dims}, {shape}: {:#?}",
                    broken.bug_location().unwrap_or_default(),
                    outcome.report.findings
                );
            } else {
                let (want, scale) = matmul_f64(&a, &b, dims);
                let check = MatmulCheck::new(&outcome.result, &want, &scale, k);
                prop_assert!(check.is_match(), "{check}");
                prop_assert!(outcome.report.is_clean(), "{:?}", outcome.report.findings);
            }
            Ok(())
        })
        .unwrap();
}

/// `OutOfBounds` at the `// BUG:` line whenever TILE does not divide N, and a wrong C that
/// proptest finds; right and clean when TILE divides M, N and K.
#[test]
fn tiled_without_bounds_breaks_when_tile_does_not_divide_n() {
    let cell = RefCell::new(device());
    let is_cuda = cell.borrow().kind().is_cuda();
    let broken = variant("tiled-no-bounds");
    assert_eq!(broken.expect, Expect::OutOfBounds);
    let ragged_n = (1u32..=3, 1u32..=15).prop_map(|(tiles, rest)| tiles * TILE - rest);
    let strategy = (side(40), ragged_n, side(40), any::<u64>());
    let mut config = cases(is_cuda, 64, 16, file!());
    config.failure_persistence = None;
    let mut runner = TestRunner::new(config);
    let result = runner.run(&strategy, |(m, n, k, seed)| {
        let dims = Dims::new(m, n, k);
        let shape = tiled_shape(dims);
        let (a, b) = inputs(dims, seed);
        let guard = if is_cuda { guard_for(dims, shape) } else { 0 };
        let outcome =
            run_matmul(&mut cell.borrow_mut(), broken, &a, &b, dims, shape, guard).map_err(fail)?;
        if is_cuda {
            prop_assert!(outcome.guard_written > 0, "no stray write for {dims}");
        } else {
            prop_assert!(
                broken
                    .expect
                    .is_shown_by(&outcome.report.findings, broken.bug_line()),
                "memcheck did not name {} for {dims}: {:#?}",
                broken.bug_location().unwrap_or_default(),
                outcome.report.findings
            );
        }
        let (want, scale) = matmul_f64(&a, &b, dims);
        let check = MatmulCheck::new(&outcome.result, &want, &scale, k);
        prop_assert!(check.is_match(), "{dims}: {check}");
        Ok(())
    });
    match result {
        Err(TestError::Fail(reason, case)) => {
            assert!(
                !reason.message().contains("did not name")
                    && !reason.message().contains("no stray"),
                "{reason}"
            );
            eprintln!("wrong C found, as documented: {case:?}: {reason}");
        }
        other => panic!("no generated case showed {} wrong: {other:?}", broken.name),
    }
    let round = Dims::new(32, 48, 16);
    let (a, b) = inputs(round, 3);
    let (want, scale) = matmul_f64(&a, &b, round);
    let outcome = run_matmul(
        &mut cell.borrow_mut(),
        broken,
        &a,
        &b,
        round,
        tiled_shape(round),
        0,
    )
    .unwrap();
    let check = MatmulCheck::new(&outcome.result, &want, &scale, round.k);
    assert!(check.is_match(), "{check}");
    assert!(outcome.report.is_clean(), "{:?}", outcome.report.findings);
}

/// `Race`: racecheck names the `// BUG:` line whenever K spans more than one tile, on the
/// default schedule; under the adversarial schedule proptest finds a wrong C. With one tile
/// there is no next tile to overwrite, which is how the bug hides in small tests.
#[test]
fn tiled_missing_second_sync_races_and_an_adversarial_schedule_shows_it() {
    let cell = RefCell::new(device());
    if cell.borrow().kind().is_cuda() {
        eprintln!(
            "racecheck and the adversarial schedule are the emulator's; on a GPU the race rarely shows in C"
        );
        return;
    }
    let broken = variant("tiled-missing-second-sync");
    assert_eq!(broken.expect, Expect::Race);
    let strategy = (side(40), side(40), (TILE + 1)..=48, any::<u64>());
    let mut config = cases(false, 0, 24, file!());
    config.failure_persistence = None;
    let mut runner = TestRunner::new(config);
    let result = runner.run(&strategy, |(m, n, k, seed)| {
        let dims = Dims::new(m, n, k);
        let (a, b) = inputs(dims, seed);
        let device = &mut cell.borrow_mut();
        device.set_emu_settings(EmuSettings::default());
        let outcome =
            run_matmul(device, broken, &a, &b, dims, tiled_shape(dims), 0).map_err(fail)?;
        prop_assert!(
            broken
                .expect
                .is_shown_by(&outcome.report.findings, broken.bug_line()),
            "racecheck did not name {} for {dims}: {:#?}",
            broken.bug_location().unwrap_or_default(),
            outcome.report.findings
        );
        device.set_emu_settings(EmuSettings {
            schedule: Schedule::Adversarial { seed },
            racecheck: false,
            ..EmuSettings::default()
        });
        let outcome = run_matmul(device, broken, &a, &b, dims, tiled_shape(dims), 0);
        device.set_emu_settings(EmuSettings::default());
        let outcome = outcome.map_err(fail)?;
        let (want, scale) = matmul_f64(&a, &b, dims);
        let check = MatmulCheck::new(&outcome.result, &want, &scale, k);
        prop_assert!(check.is_match(), "adversarial schedule, {dims}: {check}");
        Ok(())
    });
    match result {
        Err(TestError::Fail(reason, case)) => {
            assert!(
                reason.message().contains("adversarial schedule"),
                "{reason}"
            );
            eprintln!("wrong C found, as documented: {case:?}: {reason}");
        }
        other => panic!("no generated case showed {} wrong: {other:?}", broken.name),
    }
    let one_tile = Dims::new(20, 20, TILE);
    let (a, b) = inputs(one_tile, 5);
    let outcome = run_matmul(
        &mut cell.borrow_mut(),
        broken,
        &a,
        &b,
        one_tile,
        tiled_shape(one_tile),
        0,
    )
    .unwrap();
    assert!(outcome.report.is_clean(), "{:?}", outcome.report.findings);
}
