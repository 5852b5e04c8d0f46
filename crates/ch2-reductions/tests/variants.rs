//! Every FIXED variant matches the f64 CPU reference within the summation error bound on
//! generated inputs and launch shapes; every BROKEN one fails the way its `Expect` says.

mod common;

use std::cell::RefCell;

use ch2_reductions::{
    BLOB_PIXEL_BOUND, Loads, ReduceBuffers, Step, SumCheck, VARIANTS, abs_sum_f64, blobs_reference,
    depth_1d, depth_2d, launch_1d, pixel_matches, run_blobs, run_reduce_1d, run_reduce_2d,
    shape_2d, sum_2d_f64, sum_f64, variant,
};
use common::{
    Data, MAX_PER_THREAD, cap_length, cap_rows, cases, data, device, floats, grid_2d, length,
    linear_shape, schedule, side, whole_warp_shape,
};
use harness::testing::assert_bug_line_named;
use harness::verify::bounds;
use harness::{Device, EmuSettings, Expect, HarnessError, LaunchShape, Schedule};
use proptest::prelude::*;
use proptest::test_runner::{TestError, TestRunner};

#[test]
fn kernel_files_present_their_variant() {
    let problems = harness::variant::registry_problems(VARIANTS);
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    assert_eq!(VARIANTS.len(), 14);
}

/// The tolerance is honest: at the longest addition chain any test here can produce, a
/// result 0.3% off (what a wrong index such as `s[tid + 1]` costs) fails it on positive data.
#[test]
fn a_three_per_mille_error_fails_the_bound() {
    let worst_1d = [
        Step::HostFinished { tree: false },
        Step::HostFinished { tree: true },
        Step::DeviceFinished,
        Step::Shuffled {
            loads: Loads::TwoFloats,
        },
        Step::Shuffled {
            loads: Loads::Float4,
        },
        Step::OneLaunch,
    ]
    .into_iter()
    .map(|step| {
        let shape = LaunchShape::linear(64, 1024);
        let longest = depth_1d(step, 64 * 1024 * MAX_PER_THREAD, shape);
        let one_block = LaunchShape::linear(1, 1024);
        longest.max(depth_1d(step, 1024 * MAX_PER_THREAD, one_block))
    })
    .max()
    .unwrap();
    // cap_rows keeps each thread's rows × columns within MAX_PER_THREAD; then a tree over at
    // most 1024 threads and the host over at most 8 × 8 blocks.
    let worst_2d = MAX_PER_THREAD as u64 + 10 + 64;
    for depth in [worst_1d, worst_2d] {
        let gamma = bounds::gamma_f32(depth + 1);
        assert!(
            gamma < 0.003 / 2.0,
            "depth {depth}: γ = {gamma:.2e} would let a 0.3% error pass"
        );
    }
    // and on real data: a million values in [0, 1), the 2D shape with the longest chains
    let x = floats(1_000_000, Data::Positive, 7);
    let want = sum_f64(&x);
    let depth = depth_1d(
        Step::HostFinished { tree: false },
        x.len(),
        LaunchShape::linear(1, 1024),
    );
    let off = SumCheck::new((want * 1.003) as f32, want, depth, abs_sum_f64(&x));
    assert!(!off.is_within(), "{off}");
    let close = SumCheck::new(want as f32, want, depth, abs_sum_f64(&x));
    assert!(close.is_within(), "{close}");
}

fn fail(error: HarnessError) -> TestCaseError {
    TestCaseError::fail(error.to_string())
}

#[test]
fn fixed_1d_reductions_match_the_cpu() {
    let cell = RefCell::new(device());
    let is_cuda = cell.borrow().kind().is_cuda();
    let largest = if is_cuda { 16_000_000 } else { 2_000_000 };
    let strategy = (length(largest), data(), any::<u64>(), linear_shape());
    for fixed in VARIANTS.iter().filter(|v| {
        v.expect.is_correct() && matches!(v.kind, Step::HostFinished { .. } | Step::DeviceFinished)
    }) {
        let mut runner = TestRunner::new(cases(is_cuda, 96, 32, file!()));
        runner
            .run(&strategy, |(len, data, seed, shape)| {
                let len = cap_length(len, shape);
                let x = floats(len, data, seed);
                let outcome =
                    run_reduce_1d(&mut cell.borrow_mut(), fixed, &x, shape).map_err(fail)?;
                let want = sum_f64(&x);
                let check = SumCheck::new(
                    outcome.result,
                    want,
                    depth_1d(fixed.kind, len, shape),
                    abs_sum_f64(&x),
                );
                prop_assert!(
                    check.is_within(),
                    "{} on {len} {data:?} floats, {shape}: {check}",
                    fixed.name
                );
                if data == Data::Positive && len > 0 {
                    prop_assert!(check.bound < 0.003 * want, "{check}");
                }
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

/// The climb's kernels (warp shuffles, float4 loads, a GPU-sized grid, one launch) on every
/// emulator schedule: generated lengths (n % 4 of every kind, shorter than one grid stride or
/// thousands of strides long), blocks of any whole number of warps, 1–64 blocks, any data;
/// checked against the f64 sum under the error bound of each kernel's addition chains, with
/// the checkers silent.
#[test]
fn the_climb_matches_the_cpu_on_every_schedule() {
    let cell = RefCell::new(device());
    let is_cuda = cell.borrow().kind().is_cuda();
    let largest = if is_cuda { 16_000_000 } else { 200_000 };
    let strategy = (
        length(largest),
        data(),
        any::<u64>(),
        whole_warp_shape(),
        schedule(),
    );
    let climb: Vec<_> = VARIANTS
        .iter()
        .filter(|v| {
            matches!(
                v.kind,
                Step::Shuffled { .. } | Step::OneLaunch | Step::AtomicFinish
            )
        })
        .collect();
    assert_eq!(climb.len(), 5);
    for rung in climb {
        assert!(rung.expect.is_correct(), "{}", rung.name);
        let mut runner = TestRunner::new(cases(is_cuda, 64, 20, file!()));
        runner
            .run(&strategy, |(len, data, seed, shape, schedule)| {
                let len = cap_length(len, shape);
                let x = floats(len, data, seed);
                let outcome = cell
                    .borrow_mut()
                    .with_schedule(schedule, |device| run_reduce_1d(device, rung, &x, shape))
                    .map_err(fail)?;
                let check = SumCheck::new(
                    outcome.result,
                    sum_f64(&x),
                    depth_1d(rung.kind, len, shape),
                    abs_sum_f64(&x),
                );
                prop_assert!(
                    check.is_within(),
                    "{} on {len} {data:?} floats, {shape}, {schedule:?}: {check}",
                    rung.name
                );
                prop_assert!(
                    outcome.report.is_clean(),
                    "{} {schedule:?}: {:?}",
                    rung.name,
                    outcome.report.findings
                );
                Ok(())
            })
            .unwrap_or_else(|error| panic!("{}: {error}", rung.name));
    }
}

/// The one-launch reduction's last block sets its counter back to 0, so launching it again on
/// the same buffers, with nothing cleared in between, gives the same total.
#[test]
fn one_launch_leaves_its_counter_ready_for_the_next_launch() {
    let mut device = device();
    let rung = variant("one-launch");
    let x = floats(70_001, Data::Digits, 11);
    let want = sum_f64(&x) as f32;
    let shape = LaunchShape::linear(12, 96);
    let input = device.upload(&x, "x").unwrap();
    let mut buffers = ReduceBuffers::new(&mut device, 12).unwrap();
    for launch in 0..3 {
        let report = launch_1d(&mut device, rung, &input, x.len(), shape, &mut buffers).unwrap();
        assert!(report.is_clean(), "{:?}", report.findings);
        assert_eq!(
            buffers.result(&mut device, rung.kind, shape).unwrap(),
            want,
            "launch {launch}"
        );
        assert_eq!(device.download(&buffers.blocks_done).unwrap(), [0]);
    }
}

fn reduce_2d_case(
    device: &mut Device,
    name: &str,
    rows: usize,
    cols: usize,
    data: Data,
    seed: u64,
    shape: LaunchShape,
) -> Result<(SumCheck, harness::LaunchReport), TestCaseError> {
    let a = floats(rows * cols, data, seed);
    let outcome = run_reduce_2d(device, variant(name), &a, rows, cols, shape).map_err(fail)?;
    let check = SumCheck::new(
        outcome.result,
        sum_2d_f64(&a, rows, cols),
        depth_2d(rows, cols, shape),
        abs_sum_f64(&a),
    );
    Ok((check, outcome.report))
}

#[test]
fn reduction_2d_matches_the_cpu_on_any_grid() {
    let cell = RefCell::new(device());
    let is_cuda = cell.borrow().kind().is_cuda();
    let largest = if is_cuda { 2_048 } else { 1_024 };
    let strategy = (
        side(largest),
        side(largest),
        data(),
        any::<u64>(),
        grid_2d(),
        common::block_2d(),
    );
    let mut runner = TestRunner::new(cases(is_cuda, 96, 40, file!()));
    runner
        .run(&strategy, |(rows, cols, data, seed, grid, block)| {
            let shape = shape_2d(grid, block);
            let rows = cap_rows(rows, cols, shape);
            let (check, report) = reduce_2d_case(
                &mut cell.borrow_mut(),
                "reduction-2d",
                rows,
                cols,
                data,
                seed,
                shape,
            )?;
            prop_assert!(
                check.is_within(),
                "{rows} × {cols} {data:?}, {shape}: {check}"
            );
            if data == Data::Positive {
                prop_assert!(check.bound < 0.003 * check.want, "{check}");
            }
            prop_assert!(report.is_clean(), "{:?}", report.findings);
            Ok(())
        })
        .unwrap();
}

#[test]
fn blobs_match_the_cpu_for_any_image_size() {
    let cell = RefCell::new(device());
    let is_cuda = cell.borrow().kind().is_cuda();
    let blobs = variant("blobs");
    let largest = if is_cuda { 3_000u32 } else { 120 };
    let sides = prop_oneof![1u32..=40, 41u32..=largest];
    let mut runner = TestRunner::new(cases(is_cuda, 48, 16, file!()));
    runner
        .run(&(sides.clone(), sides), |(width, height)| {
            let outcome = run_blobs(&mut cell.borrow_mut(), blobs, width, height).map_err(fail)?;
            let want = blobs_reference(width, height);
            let worst = outcome
                .result
                .iter()
                .zip(&want)
                .map(|(&g, &w)| (f64::from(g) - w).abs())
                .fold(0.0, f64::max);
            prop_assert!(
                worst <= BLOB_PIXEL_BOUND,
                "{width} × {height}: a pixel is {worst:.2e} from the CPU"
            );
            prop_assert!(outcome.report.is_clean(), "{:?}", outcome.report.findings);
            Ok(())
        })
        .unwrap();
}

#[test]
fn shapes_the_kernels_cannot_handle_are_refused_in_one_sentence() {
    let mut device = device();
    let x = [1.0f32; 100];
    let tree = variant("tree-reduction");
    let error = run_reduce_1d(&mut device, tree, &x, LaunchShape::linear(2, 96))
        .unwrap_err()
        .to_string();
    assert_eq!(
        error,
        "cannot launch tree_reduction with grid 2 × block 96: the tree halves the block's 96 threads at every step, so their number must be a power of two"
    );
    // the naive sum takes any block size
    let naive = run_reduce_1d(
        &mut device,
        variant("naive-block-sum"),
        &x,
        LaunchShape::linear(2, 96),
    )
    .unwrap();
    assert_eq!(naive.result, 100.0);
    let error = run_reduce_1d(&mut device, tree, &x, shape_2d((2, 1), (32, 2)))
        .unwrap_err()
        .to_string();
    assert!(error.ends_with("so grid and block must be 1D"), "{error}");
    let error = run_reduce_2d(
        &mut device,
        variant("reduction-2d"),
        &x,
        10,
        10,
        shape_2d((2, 2), (24, 2)),
    )
    .unwrap_err()
    .to_string();
    assert!(error.contains("48 threads at every step"), "{error}");
    let error = run_reduce_2d(
        &mut device,
        variant("reduction-2d"),
        &x,
        10,
        11,
        shape_2d((1, 1), (32, 1)),
    )
    .unwrap_err()
    .to_string();
    assert_eq!(error, "100 values do not form a 10 × 11 matrix");
    let error = run_reduce_1d(
        &mut device,
        variant("blobs"),
        &x,
        LaunchShape::linear(1, 32),
    )
    .unwrap_err()
    .to_string();
    assert_eq!(error, "blobs is not a 1D reduction; see --list");
    let error = run_reduce_1d(&mut device, tree, &x, LaunchShape::linear(1, 2048))
        .unwrap_err()
        .to_string();
    assert!(
        error.contains("above the device's limit of 1024"),
        "{error}"
    );
    assert!(run_blobs(&mut device, variant("blobs"), 0, 5).is_err());
    let error = run_reduce_1d(
        &mut device,
        variant("warp-shuffle"),
        &x,
        LaunchShape::linear(2, 48),
    )
    .unwrap_err()
    .to_string();
    assert_eq!(
        error,
        "cannot launch warp_shuffle with grid 2 × block 48: the block's sum is added up by warp shuffles over whole warps, so its 48 threads must be a multiple of 32"
    );
    let error = run_reduce_1d(
        &mut device,
        variant("float4-loads"),
        &x,
        LaunchShape::linear(1 << 19, 1024),
    )
    .unwrap_err()
    .to_string();
    assert!(error.ends_with("at most 2^28 threads"), "{error}");
}

/// A `Race` variant on the emulator: racecheck names the `// BUG:` line for every block size,
/// and the adversarial schedule, where one warp runs ahead, turns the race into a wrong sum.
#[test]
fn tree_without_barrier_races_at_its_bug_line() {
    let mut device = device();
    let racy = variant("tree-no-sync");
    assert_eq!(racy.expect, Expect::Race);
    let x = floats(10_007, Data::Positive, 3);
    let want = sum_f64(&x);
    if device.kind().is_cuda() {
        // A GPU may or may not show it in the result; racecheck runs on the emulator.
        let outcome = run_reduce_1d(&mut device, racy, &x, LaunchShape::linear(8, 1024)).unwrap();
        eprintln!(
            "tree-no-sync on {}: {} (reference {want})",
            device.banner(),
            outcome.result
        );
        return;
    }
    for threads in [64, 256, 1024] {
        let shape = LaunchShape::linear(4, threads);
        let outcome = run_reduce_1d(&mut device, racy, &x, shape).unwrap();
        assert_bug_line_named(racy, &outcome.report.findings, &shape.to_string());
    }
    device.set_emu_settings(EmuSettings {
        schedule: Schedule::Adversarial { seed: 1 },
        ..EmuSettings::default()
    });
    let shape = LaunchShape::linear(4, 256);
    let outcome = run_reduce_1d(&mut device, racy, &x, shape).unwrap();
    let check = SumCheck::new(
        outcome.result,
        want,
        depth_1d(racy.kind, x.len(), shape),
        abs_sum_f64(&x),
    );
    assert!(
        !check.is_within(),
        "the adversarial schedule hid the race: {check}"
    );
}

/// `BarrierDivergence`: synccheck names the barrier inside the `if`; on a GPU the variant is
/// refused before anything is launched.
#[test]
fn barrier_inside_if_is_divergence_and_never_reaches_a_gpu() {
    let mut device = device();
    let divergent = variant("tree-sync-in-if");
    assert_eq!(divergent.expect, Expect::BarrierDivergence);
    let x = floats(5_003, Data::Signed, 4);
    if device.kind().is_cuda() {
        let error = run_reduce_1d(&mut device, divergent, &x, LaunchShape::linear(4, 256))
            .unwrap_err()
            .to_string();
        assert!(error.contains("is emulator-only"), "{error}");
        assert!(!device.runs(divergent));
        return;
    }
    for threads in [64, 256, 1024] {
        let shape = LaunchShape::linear(3, threads);
        let outcome = run_reduce_1d(&mut device, divergent, &x, shape).unwrap();
        assert_bug_line_named(divergent, &outcome.report.findings, &shape.to_string());
    }
}

#[test]
fn blobs_without_barrier_race_at_their_bug_line() {
    let mut device = device();
    let racy = variant("blobs-no-sync");
    assert_eq!(racy.expect, Expect::Race);
    let (width, height) = (72, 40);
    if device.kind().is_cuda() {
        run_blobs(&mut device, racy, width, height).unwrap();
        return;
    }
    let outcome = run_blobs(&mut device, racy, width, height).unwrap();
    assert_bug_line_named(racy, &outcome.report.findings, "a 72 × 40 image");
    device.set_emu_settings(EmuSettings {
        schedule: Schedule::Adversarial { seed: 5 },
        ..EmuSettings::default()
    });
    let image = run_blobs(&mut device, racy, width, height).unwrap().result;
    let want = blobs_reference(width, height);
    let wrong = image
        .iter()
        .zip(&want)
        .filter(|&(&g, &w)| !pixel_matches(g, w))
        .count();
    assert!(wrong > 0, "the adversarial schedule hid the race");
}

/// `WrongResult`: proptest searches non-square grids and must find one where the swapped
/// strides disagree with the CPU; on square grids it is right, which is why the bug hides.
#[test]
fn swapped_strides_are_shown_wrong_by_a_generated_non_square_grid() {
    let cell = RefCell::new(device());
    let is_cuda = cell.borrow().kind().is_cuda();
    let name = "reduction-2d-swapped-strides";
    assert_eq!(variant(name).expect, Expect::WrongResult);
    let strategy = (
        side(400),
        side(400),
        any::<u64>(),
        common::non_square_grid_2d(),
        common::block_2d(),
    );
    let mut config = cases(is_cuda, 64, 32, file!());
    config.failure_persistence = None;
    let mut runner = TestRunner::new(config);
    let result = runner.run(&strategy, |(rows, cols, seed, grid, block)| {
        let shape = shape_2d(grid, block);
        let rows = cap_rows(rows, cols, shape);
        let (check, _) = reduce_2d_case(
            &mut cell.borrow_mut(),
            name,
            rows,
            cols,
            Data::Positive,
            seed,
            shape,
        )?;
        prop_assert!(check.is_within(), "{rows} × {cols}, {shape}: {check}");
        Ok(())
    });
    match result {
        Err(TestError::Fail(reason, case)) => {
            eprintln!("counterexample found, as documented: {case:?}: {reason}")
        }
        other => panic!("no generated non-square grid showed {name} wrong: {other:?}"),
    }

    let mut runner = TestRunner::new(cases(is_cuda, 32, 16, file!()));
    let square = (
        side(400),
        side(400),
        data(),
        any::<u64>(),
        common::square_grid_2d(),
        common::block_2d(),
    );
    runner
        .run(&square, |(rows, cols, data, seed, grid, block)| {
            let shape = shape_2d(grid, block);
            let rows = cap_rows(rows, cols, shape);
            let (check, report) =
                reduce_2d_case(&mut cell.borrow_mut(), name, rows, cols, data, seed, shape)?;
            prop_assert!(
                check.is_within(),
                "square grid {rows} × {cols}, {shape}: {check}"
            );
            prop_assert!(report.is_clean(), "{:?}", report.findings);
            Ok(())
        })
        .unwrap();
}
