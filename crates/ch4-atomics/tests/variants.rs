//! Every FIXED variant matches the CPU on generated inputs and launch shapes; every BROKEN one
//! fails the way its `Expect` says, on generated cases, not hand-picked ones.

mod common;

use ch4_atomics::{
    ASCII_BINS, BYTE_HISTOGRAM_CLIMB, ONE_BIN_PER_THREAD_SAFE_MAX_BLOCK, Step, VARIANTS,
    ascii_histogram_idiomatic, ascii_histogram_loop, byte_histogram, histogram_idiomatic,
    histogram_loop, run_any_bins_histogram, run_ascii_histogram, run_byte_histogram, run_increment,
    variant,
};
use common::{alphabet, blocks, cases, device, length, schedule, text, threads_per_block};
use harness::rand::Rng;
use harness::testing::assert_bug_line_named;
use harness::verify::compare_exact;
use harness::{Expect, LaunchShape};
use std::cell::RefCell;

use proptest::prelude::*;
use proptest::test_runner::{TestError, TestRunner};

#[test]
fn kernel_files_present_their_variant() {
    let problems = harness::variant::registry_problems(VARIANTS);
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    assert_eq!(VARIANTS.len(), 13);
}

proptest! {
    #[test]
    fn the_two_cpu_references_agree(len in length(200_000), alphabet in alphabet(), seed in any::<u64>()) {
        let bytes = text(len, alphabet, seed);
        let want = ascii_histogram_loop(&bytes);
        prop_assert_eq!(ascii_histogram_idiomatic(&bytes), want.clone());
        prop_assert_eq!(want.iter().map(|&c| c as usize).sum::<usize>(), bytes.iter().filter(|b| b.is_ascii()).count());
        let values: Vec<u32> = bytes.iter().map(|&b| u32::from(b)).collect();
        prop_assert_eq!(histogram_idiomatic(&values, 200), histogram_loop(&values, 200));
    }
}

#[test]
fn atomic_increment_counts_every_thread() {
    let cell = RefCell::new(device());
    let is_cuda = cell.borrow().kind().is_cuda();
    let config = cases(is_cuda, 64, 32, file!());
    let atomic = variant("atomic-increment");
    let mut runner = TestRunner::new(config);
    let shapes = (blocks(is_cuda), threads_per_block());
    runner
        .run(&shapes, |(blocks, threads)| {
            let shape = LaunchShape::linear(blocks, threads);
            let outcome = run_increment(&mut cell.borrow_mut(), atomic, shape)
                .map_err(|e| TestCaseError::fail(e.to_string()))?;
            prop_assert_eq!(i64::from(outcome.result), shape.total_threads() as i64);
            prop_assert!(outcome.report.is_clean(), "{:?}", outcome.report.findings);
            Ok(())
        })
        .unwrap();
}

#[test]
fn fixed_ascii_histograms_match_the_cpu() {
    let cell = RefCell::new(device());
    let is_cuda = cell.borrow().kind().is_cuda();
    let largest = if is_cuda { 8_000_000 } else { 300_000 };
    let strategy = (
        length(largest),
        alphabet(),
        any::<u64>(),
        blocks(is_cuda),
        threads_per_block(),
    );
    for fixed in VARIANTS
        .iter()
        .filter(|v| v.expect.is_correct() && v.kind == Step::AsciiHistogram)
    {
        let mut runner = TestRunner::new(cases(is_cuda, 64, 24, file!()));
        runner
            .run(&strategy, |(len, alphabet, seed, blocks, threads)| {
                let bytes = text(len, alphabet, seed);
                let shape = LaunchShape::linear(blocks, threads);
                let outcome = run_ascii_histogram(&mut cell.borrow_mut(), fixed, &bytes, shape)
                    .map_err(|e| TestCaseError::fail(e.to_string()))?;
                let comparison = compare_exact(&outcome.result, &ascii_histogram_loop(&bytes));
                prop_assert!(
                    comparison.is_match(),
                    "{} on {shape}: {comparison}",
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

/// The climb's 256-bin kernels against the CPU on generated lengths (every remainder of the
/// 16-byte loads), byte distributions (one letter only: every lane on one bin), launch shapes
/// and emulator schedules, with the checkers silent.
#[test]
fn byte_histograms_match_the_cpu_on_any_grid_and_schedule() {
    let cell = RefCell::new(device());
    let is_cuda = cell.borrow().kind().is_cuda();
    let largest = if is_cuda { 8_000_000 } else { 60_000 };
    let strategy = (
        length(largest),
        alphabet(),
        any::<u64>(),
        blocks(is_cuda),
        threads_per_block(),
        schedule(),
    );
    let exercise = ["histogram-bytes-lane-pairs"];
    for name in BYTE_HISTOGRAM_CLIMB.into_iter().chain(exercise) {
        let fixed = variant(name);
        assert_eq!(fixed.kind, Step::ByteHistogram);
        let whole_warps = name == "histogram-bytes-warp-aggregated";
        let mut runner = TestRunner::new(cases(is_cuda, 64, 20, file!()));
        runner
            .run(
                &strategy,
                |(len, alphabet, seed, blocks, threads, schedule)| {
                    let bytes = text(len, alphabet, seed);
                    let threads = if whole_warps {
                        threads.next_multiple_of(32).min(1024)
                    } else {
                        threads
                    };
                    let shape = LaunchShape::linear(blocks, threads);
                    let outcome = cell
                        .borrow_mut()
                        .with_schedule(schedule, |device| {
                            run_byte_histogram(device, fixed, &bytes, shape)
                        })
                        .map_err(|e| TestCaseError::fail(e.to_string()))?;
                    let comparison = compare_exact(&outcome.result, &byte_histogram(&bytes));
                    prop_assert!(
                        comparison.is_match(),
                        "{name}, {len} bytes, {shape}, {schedule:?}: {comparison}"
                    );
                    prop_assert!(
                        outcome.report.is_clean(),
                        "{name}: {:?}",
                        outcome.report.findings
                    );
                    Ok(())
                },
            )
            .unwrap_or_else(|error| panic!("{name}: {error}"));
    }
}

/// Lane pairs count in 16-bit halves: one block of one warp on 2²¹ + 16 copies of one byte
/// makes every lane count 65,552 bytes, past 65,535, so only the flushes every 4095 rounds keep
/// the low half from carrying into the high one (and the high one from wrapping).
#[test]
fn lane_pairs_flush_before_a_16_bit_count_overflows() {
    let mut device = device();
    let pairs = variant("histogram-bytes-lane-pairs");
    let bytes = vec![b'e'; (1 << 21) + 16 * 32];
    let shape = LaunchShape::linear(1, 32);
    let outcome = run_byte_histogram(&mut device, pairs, &bytes, shape).unwrap();
    assert_eq!(outcome.result, byte_histogram(&bytes));
    assert!(outcome.report.is_clean(), "{:?}", outcome.report.findings);
}

#[test]
fn warp_aggregation_refuses_blocks_of_partial_warps() {
    let mut device = device();
    let aggregated = variant("histogram-bytes-warp-aggregated");
    let error = run_byte_histogram(&mut device, aggregated, b"abc", LaunchShape::linear(2, 48))
        .unwrap_err()
        .to_string();
    assert_eq!(
        error,
        "cannot launch histogram_bytes_warp_aggregated with grid 2 × block 48: its __match_any_sync takes all 32 lanes of a warp, so blockDim.x must be a multiple of 32, not 48"
    );
    // the others take any block
    let outcome = run_byte_histogram(
        &mut device,
        variant("histogram-bytes-lane-copies"),
        b"abcab",
        LaunchShape::linear(2, 48),
    )
    .unwrap();
    assert_eq!(outcome.result, byte_histogram(b"abcab"));
}

#[test]
fn any_bins_histogram_matches_the_cpu_for_any_bin_count() {
    let cell = RefCell::new(device());
    let is_cuda = cell.borrow().kind().is_cuda();
    let any_bins = variant("histogram-any-bins");
    let largest = if is_cuda { 4_000_000 } else { 100_000 };
    // 12,288 bins fill the 48 KiB of shared memory a block may use.
    let bins = prop_oneof![1u32..=300, 301u32..=12_288];
    let strategy = (
        length(largest),
        bins,
        any::<u64>(),
        blocks(is_cuda),
        threads_per_block(),
    );
    let mut runner = TestRunner::new(cases(is_cuda, 64, 24, file!()));
    runner
        .run(&strategy, |(len, bins, seed, blocks, threads)| {
            let mut rng = harness::cli::seeded_rng(seed);
            let values: Vec<u32> = (0..len)
                .map(|_| rng.random_range(0..bins + bins / 4 + 1))
                .collect();
            let outcome = run_any_bins_histogram(
                &mut cell.borrow_mut(),
                any_bins,
                &values,
                bins,
                blocks,
                threads,
            )
            .map_err(|e| TestCaseError::fail(e.to_string()))?;
            let comparison =
                compare_exact(&outcome.result, &histogram_loop(&values, bins as usize));
            prop_assert!(
                comparison.is_match(),
                "{bins} bins, {blocks} × {threads}: {comparison}"
            );
            prop_assert!(outcome.report.is_clean(), "{:?}", outcome.report.findings);
            Ok(())
        })
        .unwrap();
}

#[test]
fn any_bins_refuses_more_shared_memory_than_a_block_has() {
    let mut device = device();
    let error = run_any_bins_histogram(
        &mut device,
        variant("histogram-any-bins"),
        &[1, 2, 3],
        12_289,
        1,
        32,
    )
    .unwrap_err()
    .to_string();
    assert!(
        error.contains("49156 bytes of shared memory per block"),
        "{error}"
    );
}

#[test]
fn impossible_launch_shapes_are_refused_in_one_sentence() {
    let mut device = device();
    let error = run_increment(
        &mut device,
        variant("atomic-increment"),
        LaunchShape::linear(1, 1025),
    )
    .unwrap_err()
    .to_string();
    assert!(
        error.starts_with("cannot launch atomic_increment with grid 1 × block 1025:"),
        "{error}"
    );
    assert!(!error.contains('\n'), "{error}");
}

/// The race of a `Race` variant: on the emulator racecheck names the `// BUG:` line; on a GPU
/// only the result can show it, so the launch is large enough that lost updates are certain.
#[test]
fn racy_increment_loses_updates_and_racecheck_names_its_line() {
    let mut device = device();
    let racy = variant("racy-increment");
    assert_eq!(racy.expect, Expect::Race);
    let shape = if device.kind().is_cuda() {
        LaunchShape::linear(1024, 256)
    } else {
        ch4_atomics::INCREMENT_SHAPE
    };
    let outcome = run_increment(&mut device, racy, shape).unwrap();
    assert!(
        i64::from(outcome.result) < shape.total_threads() as i64,
        "{} threads counted {} on {}",
        shape.total_threads(),
        outcome.result,
        device.banner()
    );
    if !device.kind().is_cuda() {
        assert_bug_line_named(racy, &outcome.report.findings, &shape.to_string());
    }
}

#[test]
fn racy_histograms_are_caught() {
    let mut device = device();
    let english = ch4_atomics::walkthrough::DEFAULT_TEXT;
    for name in ["histogram-no-atomics", "histogram-shared-no-merge-barrier"] {
        let racy = variant(name);
        assert_eq!(racy.expect, Expect::Race);
        if device.kind().is_cuda() {
            // Without atomics, lost updates on a large text are certain; the missing barrier
            // before the merge may or may not show in the result on a GPU, and racecheck for it
            // runs on the emulator (and under compute-sanitizer).
            if name == "histogram-no-atomics" {
                let big: Vec<u8> = english.iter().copied().cycle().take(16 << 20).collect();
                let outcome =
                    run_ascii_histogram(&mut device, racy, &big, LaunchShape::linear(1024, 256))
                        .unwrap();
                let comparison = compare_exact(&outcome.result, &ascii_histogram_loop(&big));
                assert!(
                    !comparison.is_match(),
                    "{name} gave the right histogram of 16 MiB on {}",
                    device.banner()
                );
            }
            continue;
        }
        let outcome =
            run_ascii_histogram(&mut device, racy, english, LaunchShape::linear(32, 256)).unwrap();
        assert_bug_line_named(racy, &outcome.report.findings, name);
    }
}

/// `WrongResult`: proptest searches launch shapes and texts, and must find a case where the
/// kernel disagrees with the CPU.
#[test]
fn one_bin_per_thread_is_shown_wrong_by_a_generated_case() {
    let cell = RefCell::new(device());
    let is_cuda = cell.borrow().kind().is_cuda();
    let broken = variant("histogram-shared-one-bin-per-thread");
    assert_eq!(broken.expect, Expect::WrongResult);
    // Fewer than 128 threads leave bins unzeroed and unmerged: a wrong result. More than 128
    // index past the end of the shared array instead, which memcheck reports (below).
    let max_block = ONE_BIN_PER_THREAD_SAFE_MAX_BLOCK;
    let strategy = (
        length(100_000),
        common::alphabet(),
        any::<u64>(),
        1u32..=16,
        1u32..=max_block,
    );
    let mut config = cases(is_cuda, 64, 32, file!());
    config.failure_persistence = None;
    let mut runner = TestRunner::new(config);
    let result = runner.run(&strategy, |(len, alphabet, seed, blocks, threads)| {
        let bytes = text(len, alphabet, seed);
        let outcome = run_ascii_histogram(
            &mut cell.borrow_mut(),
            broken,
            &bytes,
            LaunchShape::linear(blocks, threads),
        )
        .map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert_eq!(outcome.result, ascii_histogram_loop(&bytes));
        Ok(())
    });
    match result {
        Err(TestError::Fail(reason, case)) => {
            eprintln!("counterexample found, as documented: {case:?}: {reason}")
        }
        other => panic!("no generated case showed {} wrong: {other:?}", broken.name),
    }
    // and with exactly one thread per bin it is right, which is why the bug hides.
    let bytes = text(10_000, common::Alphabet::Printable, 1);
    let right = run_ascii_histogram(
        &mut cell.borrow_mut(),
        broken,
        &bytes,
        LaunchShape::linear(8, ASCII_BINS as u32),
    )
    .unwrap();
    assert_eq!(right.result, ascii_histogram_loop(&bytes));
    if !is_cuda {
        let wide = run_ascii_histogram(
            &mut cell.borrow_mut(),
            broken,
            &bytes,
            LaunchShape::linear(2, 256),
        )
        .unwrap();
        assert!(
            Expect::OutOfBounds.is_shown_by(&wide.report.findings, broken.bug_line()),
            "memcheck did not name {} for 256 threads: {:#?}",
            broken.bug_location().unwrap_or_default(),
            wide.report.findings
        );
    }
}
