//! Every FIXED variant matches the CPU on generated lengths, values and launch shapes; every
//! BROKEN one fails the way its `Expect` says, on generated cases, not hand-picked ones.

mod common;

use std::cell::RefCell;

use ch6_scans::{
    LargeScanKernels, MAX_ONE_BLOCK_EXCLUSIVE, MAX_ONE_BLOCK_INCLUSIVE, Step, VARIANTS,
    blelloch_counted, compile_error, exclusive_abs_sums, exclusive_scan, exclusive_scan_f64,
    hillis_steele_counted, inclusive_scan, large_scan_depth, max_tile_threads, padded_len,
    run_convert, run_grid_inclusive, run_large_scan, run_multi_launch, run_one_block,
    run_tile_scan, variant,
};
use common::{
    cases, climb_threads_up_to, device, floats, length, one_block_case, schedule, tile_threads,
    values, values_kind,
};
use harness::testing::assert_bug_line_named;
use harness::verify::{bounds, compare_exact, compare_within};
use harness::{EmuSettings, Expect, HarnessError, Schedule};
use proptest::prelude::*;
use proptest::test_runner::{TestError, TestRunner};

fn fail(error: HarnessError) -> TestCaseError {
    TestCaseError::fail(error.to_string())
}

#[test]
fn kernel_files_present_their_variant() {
    let problems = harness::variant::registry_problems(VARIANTS);
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    assert_eq!(VARIANTS.len(), 19);
}

proptest! {
    #[test]
    fn the_cpu_references_agree(len in length(5_000), kind in values_kind(), seed in any::<u64>()) {
        let x = values(len, kind, seed);
        let inclusive = inclusive_scan(&x);
        let exclusive = exclusive_scan(&x);
        prop_assert_eq!(&hillis_steele_counted(&x).0, &inclusive);
        prop_assert_eq!(&blelloch_counted(&x).0, &exclusive);
        for i in 0..len {
            prop_assert_eq!(inclusive[i], exclusive[i].wrapping_add(x[i]));
        }
    }
}

#[test]
fn fixed_one_block_scans_match_the_cpu() {
    let cell = RefCell::new(device());
    let is_cuda = cell.borrow().kind().is_cuda();
    for fixed in VARIANTS.iter().filter(|v| {
        v.expect.is_correct() && matches!(v.kind, Step::OneBlockInclusive | Step::OneBlockExclusive)
    }) {
        let exclusive = fixed.kind == Step::OneBlockExclusive;
        let limit = if exclusive {
            MAX_ONE_BLOCK_EXCLUSIVE
        } else {
            MAX_ONE_BLOCK_INCLUSIVE
        };
        let strategy = (
            one_block_case(limit, exclusive),
            values_kind(),
            any::<u64>(),
        );
        let mut runner = TestRunner::new(cases(is_cuda, 256, 64, file!()));
        runner
            .run(&strategy, |((n, threads), kind, seed)| {
                let x = values(n, kind, seed);
                let want = if exclusive {
                    exclusive_scan(&x)
                } else {
                    inclusive_scan(&x)
                };
                let outcome =
                    run_one_block(&mut cell.borrow_mut(), fixed, &x, threads).map_err(fail)?;
                let comparison = compare_exact(&outcome.result, &want);
                prop_assert!(
                    comparison.is_match(),
                    "{} n = {n}, {threads} threads: {comparison}",
                    fixed.name
                );
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

/// The emulator's bank-conflict count agrees with the chapter's table: on 2048 elements the
/// worst access of the tree's line is 32-way in blelloch-shared and 2-way once padded, what
/// `up_sweep_bank_conflicts` computes for warp 0 (every warp sees the same pattern).
#[test]
fn the_emulator_counts_the_bank_conflicts_the_table_predicts() {
    let mut device = harness::Device::open(harness::BackendChoice::Emu).unwrap();
    device.set_emu_settings(harness::EmuSettings {
        bank_conflicts: true,
        ..harness::EmuSettings::default()
    });
    let x = values(2048, ch6_scans::testing::Values::Small, 7);
    let levels = ch6_scans::up_sweep_bank_conflicts(2048);
    for (name, predicted) in [
        ("blelloch-shared", levels.iter().map(|l| l.ways).max()),
        (
            "blelloch-shared-conflict-free",
            levels.iter().map(|l| l.padded_ways).max(),
        ),
    ] {
        let fixed = variant(name);
        let outcome = run_one_block(&mut device, fixed, &x, 1024).unwrap();
        assert_eq!(outcome.result, exclusive_scan(&x), "{name}");
        let up_sweep = harness::kernel::line_of_marker(fixed.kernel.source, "temp[bi")
            .expect("the up-sweep's line");
        let counted = outcome
            .report
            .bank_conflicts
            .iter()
            .filter(|line| line.at.line == up_sweep)
            .map(|line| line.worst_ways as usize)
            .max();
        assert_eq!(
            counted, predicted,
            "{name}: {:#?}",
            outcome.report.bank_conflicts
        );
        let worst = outcome
            .report
            .bank_conflicts
            .iter()
            .map(|line| line.worst_ways)
            .max();
        let expected_worst = if name == "blelloch-shared" { 32 } else { 2 };
        assert_eq!(worst, Some(expected_worst), "{name}");
    }
}

#[test]
fn multi_launch_blelloch_matches_the_cpu_for_any_length() {
    let cell = RefCell::new(device());
    let is_cuda = cell.borrow().kind().is_cuda();
    let multi = variant("blelloch-multi-launch");
    let largest = if is_cuda { 3_000_000 } else { 20_000 };
    let threads = prop_oneof![prop::sample::select(vec![32u32, 256, 1024]), 1u32..=1024];
    let strategy = (length(largest), values_kind(), any::<u64>(), threads);
    let mut runner = TestRunner::new(cases(is_cuda, 64, 32, file!()));
    runner
        .run(&strategy, |(n, kind, seed, threads)| {
            let x = values(n, kind, seed);
            let outcome =
                run_multi_launch(&mut cell.borrow_mut(), multi, &x, threads).map_err(fail)?;
            let comparison = compare_exact(&outcome.result, &exclusive_scan(&x));
            prop_assert!(
                comparison.is_match(),
                "n = {n}, {threads} threads: {comparison}"
            );
            prop_assert_eq!(
                outcome.launches as usize,
                2 * padded_len(n).trailing_zeros() as usize
            );
            prop_assert!(outcome.report.is_clean(), "{:?}", outcome.report.findings);
            Ok(())
        })
        .unwrap();
}

#[test]
fn large_array_scan_matches_the_cpu_on_integers() {
    let cell = RefCell::new(device());
    let is_cuda = cell.borrow().kind().is_cuda();
    let large = variant("large-array-scan");
    let largest = if is_cuda { 20_000_000 } else { 40_000 };
    let strategy = (length(largest), values_kind(), any::<u64>(), tile_threads());
    let mut runner = TestRunner::new(cases(is_cuda, 48, 24, file!()));
    runner
        .run(&strategy, |(n, kind, seed, threads)| {
            let x = values(n, kind, seed);
            let kernels = LargeScanKernels::u32(large).map_err(fail)?;
            let outcome = run_large_scan(&mut cell.borrow_mut(), large, kernels, &x, threads)
                .map_err(fail)?;
            let comparison = compare_exact(&outcome.result, &exclusive_scan(&x));
            prop_assert!(
                comparison.is_match(),
                "n = {n}, {threads} threads: {comparison}"
            );
            prop_assert!(outcome.report.is_clean(), "{:?}", outcome.report.findings);
            Ok(())
        })
        .unwrap();
}

/// f32 results within `γ_d · Σ_{j<i}|x_j|` of the f64 scan, `d` the additions behind an element.
#[test]
fn large_array_scan_matches_the_cpu_on_floats_within_the_error_bound() {
    let cell = RefCell::new(device());
    let is_cuda = cell.borrow().kind().is_cuda();
    let large = variant("large-array-scan");
    let largest = if is_cuda { 4_000_000 } else { 20_000 };
    let scale = prop::sample::select(vec![1.0f32, 1e-3, 1e6]);
    let strategy = (length(largest), scale, any::<u64>(), tile_threads());
    let mut runner = TestRunner::new(cases(is_cuda, 32, 16, file!()));
    runner
        .run(&strategy, |(n, scale, seed, threads)| {
            let x = floats(n, scale, seed);
            let kernels = LargeScanKernels::f32(large).map_err(fail)?;
            let outcome = run_large_scan(&mut cell.borrow_mut(), large, kernels, &x, threads)
                .map_err(fail)?;
            let got: Vec<f64> = outcome.result.iter().map(|&v| f64::from(v)).collect();
            let depth = large_scan_depth(n, threads);
            let abs = exclusive_abs_sums(&x);
            let comparison = compare_within(&got, &exclusive_scan_f64(&x), |i| {
                bounds::sum_f32(depth, abs[i])
            });
            prop_assert!(
                comparison.is_match(),
                "n = {n}, {threads} threads: {comparison}"
            );
            prop_assert!(outcome.report.is_clean(), "{:?}", outcome.report.findings);
            Ok(())
        })
        .unwrap();
}

#[test]
fn conversions_keep_the_last_element() {
    let cell = RefCell::new(device());
    let is_cuda = cell.borrow().kind().is_cuda();
    let convert = variant("inclusive-exclusive");
    let largest = if is_cuda { 10_000_000 } else { 20_000 };
    let threads = prop_oneof![prop::sample::select(vec![32u32, 256, 1024]), 1u32..=1024];
    let strategy = (length(largest), values_kind(), any::<u64>(), threads);
    let mut runner = TestRunner::new(cases(is_cuda, 64, 32, file!()));
    runner
        .run(&strategy, |(n, kind, seed, threads)| {
            let x = values(n, kind, seed);
            let (inclusive, exclusive) = (inclusive_scan(&x), exclusive_scan(&x));
            let outcome = run_convert(
                &mut cell.borrow_mut(),
                convert,
                &x,
                &inclusive,
                &exclusive,
                threads,
            )
            .map_err(fail)?;
            prop_assert_eq!(&outcome.result.0, &exclusive);
            prop_assert_eq!(&outcome.result.1, &inclusive);
            prop_assert!(outcome.report.is_clean(), "{:?}", outcome.report.findings);
            Ok(())
        })
        .unwrap();
}

/// The race real GPUs hide: on a GPU the result is (almost always) right, so only the
/// emulator can show it: racecheck names the `// BUG:` line under the hardware-like schedule,
/// where the answer is right, and the adversarial schedule makes the answer wrong.
#[test]
fn single_buffer_race_is_named_and_shown_wrong_by_the_adversarial_schedule() {
    let mut device = device();
    let racy = variant("hillis-steele-single-buffer");
    assert_eq!(racy.expect, Expect::Race);
    let x = values(1000, common::Values::Small, 6);
    let want = inclusive_scan(&x);
    let outcome = run_one_block(&mut device, racy, &x, 1024).unwrap();
    let Some(settings) = device.emu_settings() else {
        eprintln!(
            "{} on {}: {} (racecheck runs on the emulator)",
            racy.name,
            device.banner(),
            compare_exact(&outcome.result, &want)
        );
        return;
    };
    assert!(
        compare_exact(&outcome.result, &want).is_match(),
        "the hardware-like schedule hides the race, as a GPU does"
    );
    assert_bug_line_named(racy, &outcome.report.findings, "1000 values, 1024 threads");
    let mut wrong_seeds = 0;
    for seed in 0..4 {
        device.set_emu_settings(EmuSettings {
            schedule: Schedule::Adversarial { seed },
            ..settings
        });
        let outcome = run_one_block(&mut device, racy, &x, 1024).unwrap();
        wrong_seeds += usize::from(!compare_exact(&outcome.result, &want).is_match());
        assert!(
            racy.expect
                .is_shown_by(&outcome.report.findings, racy.bug_line())
        );
        let fixed = run_one_block(
            &mut device,
            variant("hillis-steele-double-buffer"),
            &x,
            1024,
        )
        .unwrap();
        assert_eq!(
            fixed.result, want,
            "the double buffer is right under seed {seed}"
        );
    }
    device.set_emu_settings(settings);
    assert!(
        wrong_seeds >= 3,
        "only {wrong_seeds} of 4 adversarial seeds gave a wrong scan"
    );
}

#[test]
fn the_seeds_down_sweep_is_refused_at_its_bug_line() {
    let mut device = device();
    let broken = variant("down-sweep-does-not-compile");
    assert_eq!(broken.expect, Expect::CompileError);
    let error = compile_error(&mut device, broken).unwrap();
    let HarnessError::Compile { path, log } = &error else {
        panic!("expected a compile error, got {error}");
    };
    assert_eq!(path, broken.kernel.path);
    let location = broken.bug_location().unwrap();
    let first_error = log
        .lines()
        .find(|line| line.contains(": error:"))
        .unwrap_or_default();
    assert!(
        first_error.starts_with(&format!(
            "{location}: error: \"j\" has already been declared"
        )),
        "{log}"
    );
    assert!(
        log.contains("error: identifier \"tid\" is undefined"),
        "{log}"
    );
}

/// `WrongResult`: proptest must find a length where the variant disagrees with the CPU.
fn assert_some_case_is_wrong<S: Strategy>(
    name: &str,
    is_cuda: bool,
    strategy: S,
    test: impl Fn(S::Value) -> Result<(), TestCaseError>,
) {
    let mut config = cases(is_cuda, 64, 32, file!());
    config.failure_persistence = None;
    let mut runner = TestRunner::new(config);
    match runner.run(&strategy, test) {
        Err(TestError::Fail(reason, case)) => {
            eprintln!("{name}: counterexample found, as documented: {case:?}: {reason}")
        }
        other => panic!("no generated case showed {name} wrong: {other:?}"),
    }
}

#[test]
fn blelloch_without_padding_is_wrong_off_powers_of_two_and_right_on_them() {
    let cell = RefCell::new(device());
    let is_cuda = cell.borrow().kind().is_cuda();
    let broken = variant("blelloch-no-padding");
    assert_eq!(broken.expect, Expect::WrongResult);
    let run = |n: usize, threads: u32, seed: u64| {
        let x = values(n, common::Values::Small, seed);
        let outcome = run_one_block(&mut cell.borrow_mut(), broken, &x, threads).map_err(fail)?;
        prop_assert!(outcome.report.is_clean(), "{:?}", outcome.report.findings);
        prop_assert_eq!(outcome.result, exclusive_scan(&x));
        Ok(())
    };
    let any_length = length(MAX_ONE_BLOCK_EXCLUSIVE)
        .prop_flat_map(|n| (Just(n), (n.div_ceil(2) as u32)..=1024, any::<u64>()));
    assert_some_case_is_wrong(broken.name, is_cuda, any_length, |(n, threads, seed)| {
        run(n, threads, seed)
    });
    // and on every power of two it is right, which is why tests on 2^k alone never see it.
    let powers = (1u32..=11, any::<u64>());
    let mut runner = TestRunner::new(cases(is_cuda, 32, 16, file!()));
    runner
        .run(&powers, |(power, seed)| {
            let n = 1usize << power;
            run(n, (n / 2) as u32, seed)
        })
        .unwrap();
}

#[test]
fn hillis_steele_on_many_blocks_is_wrong_past_one_block() {
    let cell = RefCell::new(device());
    let is_cuda = cell.borrow().kind().is_cuda();
    let broken = variant("hillis-steele-multi-block");
    assert_eq!(broken.expect, Expect::WrongResult);
    let largest = if is_cuda { 1 << 22 } else { 8_000 };
    let strategy = (
        length(largest),
        prop::sample::select(vec![32u32, 256, 1024]),
        any::<u64>(),
    );
    assert_some_case_is_wrong(broken.name, is_cuda, strategy, |(n, threads, seed)| {
        let x = values(n, common::Values::Small, seed);
        let outcome =
            run_grid_inclusive(&mut cell.borrow_mut(), broken, &x, threads).map_err(fail)?;
        prop_assert_eq!(outcome.result, inclusive_scan(&x));
        Ok(())
    });
    // with one block, n <= blockDim, it is the double-buffered scan and right.
    let x = values(1000, common::Values::Small, 9);
    let one = run_grid_inclusive(&mut cell.borrow_mut(), broken, &x, 1024).unwrap();
    assert_eq!(one.result, inclusive_scan(&x));
}

#[test]
fn impossible_requests_are_refused_in_one_sentence() {
    let mut device = device();
    let x = vec![1u32; 2000];
    let error = run_one_block(
        &mut device,
        variant("hillis-steele-double-buffer"),
        &x,
        1024,
    )
    .unwrap_err()
    .to_string();
    assert_eq!(
        error,
        "hillis-steele-double-buffer scans at most 1024 elements in one block, not 2000"
    );
    let error = run_one_block(&mut device, variant("blelloch-shared"), &x[..1000], 256)
        .unwrap_err()
        .to_string();
    assert_eq!(
        error,
        "blelloch-shared needs at least 512 threads for 1000 elements, not 256"
    );
    let large = variant("large-array-scan");
    let error = run_large_scan(
        &mut device,
        large,
        LargeScanKernels::u32(large).unwrap(),
        &x,
        100,
    )
    .unwrap_err()
    .to_string();
    assert!(error.contains("power-of-two block"), "{error}");
    assert!(!error.contains('\n'));
}

#[test]
fn depth_bound_is_what_the_docs_say() {
    // 2^28 elements in tiles of 1024: three levels of 10 up + 10 down + 1 add.
    assert_eq!(large_scan_depth(1 << 28, 512), 3 * 21);
    assert_eq!(large_scan_depth(1000, 512), 21);
}

/// The climb's scans (reduce-then-scan, its coalesced stores, the chained and decoupled
/// look-back single passes) on generated lengths, values and blocks of any whole number of
/// warps their launch bounds allow, under all three emulator schedules: exact against the CPU,
/// checkers silent.
#[test]
fn the_climb_matches_the_cpu_on_every_schedule() {
    let cell = RefCell::new(device());
    let is_cuda = cell.borrow().kind().is_cuda();
    let largest = if is_cuda { 3_000_000 } else { 50_000 };
    let climb: Vec<_> = VARIANTS
        .iter()
        .filter(|v| {
            v.expect.is_correct()
                && matches!(
                    v.kind,
                    Step::ReduceThenScan { .. } | Step::SinglePass { .. }
                )
        })
        .collect();
    assert_eq!(climb.len(), 6);
    for rung in climb {
        let strategy = (
            length(largest),
            values_kind(),
            any::<u64>(),
            climb_threads_up_to(max_tile_threads(rung)),
            schedule(),
        );
        let mut runner = TestRunner::new(cases(is_cuda, 48, 16, file!()));
        runner
            .run(&strategy, |(n, kind, seed, threads, schedule)| {
                let x = values(n, kind, seed);
                let outcome = cell
                    .borrow_mut()
                    .with_schedule(schedule, |device| run_tile_scan(device, rung, &x, threads))
                    .map_err(fail)?;
                let comparison = compare_exact(&outcome.result, &exclusive_scan(&x));
                prop_assert!(
                    comparison.is_match(),
                    "{} on {n} {kind:?} values, {threads} threads, {schedule:?}: {comparison}",
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

/// The look-back's three broken hand-offs: racecheck names each `// BUG:` line for several
/// block sizes (so tile counts) on every schedule. Only the flag set before its value can give
/// a wrong scan here: the emulator's memory is sequentially consistent, so a missing fence or a
/// missing acquire reorders nothing, and the race shows only in the report. The adversarial
/// schedule, which switches warps at every flag, reads the early flag's value before it is
/// written.
#[test]
fn the_look_back_races_are_named_at_their_bug_lines() {
    let mut device = device();
    let x = values(20_011, common::Values::Small, 8);
    let want = exclusive_scan(&x);
    for name in [
        "lookback-no-fence",
        "lookback-flag-before-data",
        "lookback-no-acquire",
    ] {
        let racy = variant(name);
        assert_eq!(racy.expect, Expect::Race);
        if device.kind().is_cuda() {
            let outcome = run_tile_scan(&mut device, racy, &x, 64).unwrap();
            eprintln!(
                "{name} on {}: {} (racecheck runs on the emulator)",
                device.banner(),
                compare_exact(&outcome.result, &want)
            );
            continue;
        }
        for (threads, schedule) in [
            (32, Schedule::Hardware),
            (64, Schedule::Random { seed: 4 }),
            (128, Schedule::Adversarial { seed: 4 }),
        ] {
            let outcome = device
                .with_schedule(schedule, |device| run_tile_scan(device, racy, &x, threads))
                .unwrap();
            assert_bug_line_named(
                racy,
                &outcome.report.findings,
                &format!("{threads} threads, {schedule:?}"),
            );
            if name != "lookback-flag-before-data" {
                assert_eq!(
                    outcome.result, want,
                    "{name}, {threads} threads, {schedule:?}"
                );
            }
        }
    }
    if device.kind().is_cuda() {
        return;
    }
    let early = variant("lookback-flag-before-data");
    let wrong = (1..=4)
        .filter(|&seed| {
            let outcome = device
                .with_schedule(Schedule::Adversarial { seed }, |device| {
                    run_tile_scan(device, early, &x, 32)
                })
                .unwrap();
            outcome.result != want
        })
        .count();
    assert!(
        wrong >= 3,
        "only {wrong} of 4 adversarial seeds read a value too early"
    );
}

#[test]
fn the_climb_refuses_blocks_it_cannot_run_in_one_sentence() {
    let mut device = device();
    let x = vec![1u32; 2000];
    for (threads, name, most) in [
        (48, "warp-lookback", 512),
        (1024, "reduce-then-scan", 512),
        (0, "chained-scan", 512),
        (288, "bigger-tiles", 256),
    ] {
        let error = run_tile_scan(&mut device, variant(name), &x, threads)
            .unwrap_err()
            .to_string();
        assert_eq!(
            error,
            format!(
                "{name} needs a block of whole warps, 32 to {most} threads (its scans are warp shuffles and its launch bounds allow {most}), not {threads}"
            )
        );
    }
    let scanned = run_tile_scan(&mut device, variant("warp-lookback"), &[], 64).unwrap();
    assert!(scanned.result.is_empty() && scanned.launches == 0);
}
