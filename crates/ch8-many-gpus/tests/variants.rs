//! Every FIXED variant matches the CPU on generated inputs, device counts, launch shapes and
//! schedules; every BROKEN one fails the way its `Expect` says, on generated cases.

mod common;

use ch8_many_gpus::{
    AllReduceCheck, FINAL_THREADS, Step, SumCheck, VARIANTS, all_reduce, collective_order, inputs,
    reduce_scatter_check, split_depth, split_reduction, two_all_reduces, values, variant,
};
use common::{
    any_threads, blocks, cases, devices, emulated, gpus, length, on_gpus, power_of_two_threads,
    schedule,
};
use harness::testing::assert_bug_line_named;
use harness::{Expect, LaunchShape, Schedule};
use proptest::prelude::*;
use proptest::test_runner::{TestError, TestRunner};

fn fail(error: harness::HarnessError) -> TestCaseError {
    TestCaseError::fail(error.to_string())
}

#[test]
fn kernel_files_present_their_variant() {
    let problems = harness::variant::registry_problems(VARIANTS);
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    assert_eq!(VARIANTS.len(), 9);
}

#[test]
fn chunks_cover_every_value_once_and_differ_by_at_most_one() {
    for n in [0usize, 1, 7, 64, 1_009, 20_011] {
        for parts in 1..=8 {
            let bounds: Vec<usize> = (0..=parts)
                .map(|c| ch8_many_gpus::chunk_begin(n, c, parts))
                .collect();
            assert_eq!((bounds[0], bounds[parts]), (0, n));
            let sizes: Vec<usize> = bounds.windows(2).map(|w| w[1] - w[0]).collect();
            let (small, large) = (
                sizes.iter().min().copied().unwrap_or(0),
                sizes.iter().max().copied().unwrap_or(0),
            );
            assert!(large - small <= 1, "{n} in {parts}: {sizes:?}");
        }
    }
}

/// Each step of the ring reads the chunk its predecessor finished one step before.
#[test]
fn each_ring_step_reads_the_chunk_the_predecessor_just_finished() {
    for ranks in 2..=8 {
        for rank in 0..ranks {
            let previous = (rank + ranks - 1) % ranks;
            for step in 1..ranks - 1 {
                assert_eq!(
                    ch8_many_gpus::reduce_chunk(rank, step, ranks),
                    ch8_many_gpus::reduce_chunk(previous, step - 1, ranks)
                );
            }
            let finished_by_previous = (previous + 1) % ranks;
            assert_eq!(
                ch8_many_gpus::gather_chunk(rank, 0, ranks),
                finished_by_previous
            );
        }
    }
}

#[test]
fn split_reductions_match_the_f64_sum_within_their_bound() {
    let on_gpu = on_gpus();
    for name in ["split-on-host", "gather-by-copies", "sum-over-peers"] {
        let variant = variant(name);
        let mut runner = TestRunner::new(cases(on_gpu, 8, 24, file!()));
        runner
            .run(
                &(
                    length(),
                    devices(),
                    blocks(),
                    power_of_two_threads(),
                    schedule(),
                    any::<u64>(),
                ),
                |(n, devices, blocks, threads, schedule, seed)| {
                    let Some(mut gpus) = gpus(devices, schedule) else {
                        return Ok(());
                    };
                    let data = values(n, seed);
                    let shape = LaunchShape::linear(blocks, threads);
                    let reduction =
                        split_reduction(&mut gpus, variant, &data, shape).map_err(fail)?;
                    let depth = split_depth(variant.kind, n, gpus.count(), shape, FINAL_THREADS);
                    let check = SumCheck::new(reduction.total, &data, depth);
                    prop_assert!(
                        check.is_within(),
                        "{name} {n} on {devices} {shape}: {check}"
                    );
                    prop_assert!(
                        reduction.report.is_clean(),
                        "{name}: {:#?}",
                        reduction.report.findings
                    );
                    Ok(())
                },
            )
            .unwrap();
    }
}

#[test]
fn the_ring_sums_every_value_on_every_device() {
    let on_gpu = on_gpus();
    for name in ["ring-reduce-scatter", "ring-all-reduce"] {
        let variant = variant(name);
        let mut runner = TestRunner::new(cases(on_gpu, 8, 32, file!()));
        runner
            .run(
                &(
                    length(),
                    devices(),
                    blocks(),
                    any_threads(),
                    schedule(),
                    any::<u64>(),
                ),
                |(n, devices, blocks, threads, schedule, seed)| {
                    let Some(mut gpus) = gpus(devices, schedule) else {
                        return Ok(());
                    };
                    let ranks = gpus.count();
                    let data = inputs(ranks, n, seed);
                    let shape = LaunchShape::linear(blocks, threads);
                    let outcome = all_reduce(&mut gpus, variant, &data, shape).map_err(fail)?;
                    let check = match variant.kind {
                        Step::ReduceScatter => reduce_scatter_check(&outcome.outputs, &data),
                        _ => AllReduceCheck::new(&outcome.outputs, &data),
                    };
                    prop_assert!(check.is_right(), "{name} {n} on {ranks} {shape}: {check}");
                    prop_assert!(
                        outcome.report.is_clean(),
                        "{name}: {:#?}",
                        outcome.report.findings
                    );
                    Ok(())
                },
            )
            .unwrap();
    }
}

/// Without its event waits the ring races on every device count, whenever every chunk holds a
/// value: racecheck names the all-gather's copy, whatever the schedule.
#[test]
fn the_ring_without_event_waits_races_across_devices() {
    if on_gpus() {
        eprintln!("a race between streams is the emulator's to show; GPUs may hide it");
        return;
    }
    let broken = variant("ring-without-wait");
    assert_eq!(broken.expect, Expect::Race);
    let mut runner = TestRunner::new(cases(false, 0, 24, file!()));
    runner
        .run(
            &(
                length(),
                devices(),
                blocks(),
                any_threads(),
                schedule(),
                any::<u64>(),
            ),
            |(n, devices, blocks, threads, schedule, seed)| {
                prop_assume!(n >= devices);
                let mut gpus = emulated(devices, schedule);
                let data = inputs(devices, n, seed);
                let shape = LaunchShape::linear(blocks, threads);
                let outcome = all_reduce(&mut gpus, broken, &data, shape).map_err(fail)?;
                assert_bug_line_named(
                    broken,
                    &outcome.report.findings,
                    &format!("{n} values on {devices} devices, {shape}"),
                );
                Ok(())
            },
        )
        .unwrap();
}

/// The wrong chunk offset is right exactly when the ring size divides n, so a test that only
/// tries "round" sizes passes it; proptest finds a size that does not.
#[test]
fn the_wrong_chunk_offset_is_wrong_on_some_length_and_right_on_multiples() {
    let on_gpu = on_gpus();
    let broken = variant("ring-wrong-offset");
    let shape = LaunchShape::linear(4, 128);
    let mut multiples = TestRunner::new(cases(on_gpu, 4, 12, file!()));
    multiples
        .run(
            &(1usize..=400, devices(), any::<u64>()),
            |(k, devices, seed)| {
                let Some(mut gpus) = gpus(devices, Schedule::Hardware) else {
                    return Ok(());
                };
                let ranks = gpus.count();
                let data = inputs(ranks, k * ranks, seed);
                let outcome = all_reduce(&mut gpus, broken, &data, shape).map_err(fail)?;
                let check = AllReduceCheck::new(&outcome.outputs, &data);
                prop_assert!(check.is_right(), "{} values on {ranks}: {check}", k * ranks);
                Ok(())
            },
        )
        .unwrap();

    let mut runner = TestRunner::new(cases(on_gpu, 16, 32, file!()));
    let found = runner.run(
        &(length(), devices(), any::<u64>()),
        |(n, devices, seed)| {
            let Some(mut gpus) = gpus(devices, Schedule::Hardware) else {
                return Ok(());
            };
            let ranks = gpus.count();
            let data = inputs(ranks, n, seed);
            let outcome = all_reduce(&mut gpus, broken, &data, shape).map_err(fail)?;
            let check = AllReduceCheck::new(&outcome.outputs, &data);
            prop_assert!(check.is_right(), "{n} values on {ranks}: {check}");
            Ok(())
        },
    );
    match found {
        Err(TestError::Fail(why, (n, devices, _))) => {
            assert!(n % devices != 0 || on_gpu, "{why}");
        }
        other => {
            if gpus(2, Schedule::Hardware).is_some() {
                panic!("proptest found no length where the wrong offset fails: {other:?}");
            }
        }
    }
}

/// Two all-reduces by flags, every rank issuing A then B: both sums right on every device, and
/// the waits for flags order every peer read after the step that wrote it (no finding).
#[test]
fn two_all_reduces_by_flags_sum_both_on_every_device() {
    let on_gpu = on_gpus();
    let fixed = variant("ring-by-flags");
    let mut runner = TestRunner::new(cases(on_gpu, 8, 24, file!()));
    runner
        .run(
            &(
                length(),
                devices(),
                blocks(),
                any_threads(),
                schedule(),
                any::<u64>(),
            ),
            |(n, devices, blocks, threads, schedule, seed)| {
                let Some(mut gpus) = gpus(devices, schedule) else {
                    return Ok(());
                };
                let ranks = gpus.count();
                let (a, b) = (inputs(ranks, n, seed), inputs(ranks, n, !seed));
                let shape = LaunchShape::linear(blocks, threads);
                let outcome = two_all_reduces(&mut gpus, fixed, [&a, &b], shape).map_err(fail)?;
                for (outputs, data) in outcome.outputs.iter().zip([&a, &b]) {
                    let check = AllReduceCheck::new(outputs, data);
                    prop_assert!(check.is_right(), "{n} on {ranks} {shape}: {check}");
                }
                prop_assert!(outcome.report.is_clean(), "{:#?}", outcome.report.findings);
                Ok(())
            },
        )
        .unwrap();
}

/// Ranks that disagree on the order of their collectives never finish: the emulator reports
/// the streams stuck, naming where every device stopped, on every ring size and shape. On GPUs
/// the variant is refused before it can hang them.
#[test]
fn collectives_in_different_orders_are_stuck_and_every_device_is_named() {
    let broken = variant("collectives-out-of-order");
    assert_eq!(broken.expect, Expect::Deadlock);
    assert_eq!(
        (collective_order(0, false), collective_order(1, false)),
        ([0, 1], [1, 0])
    );
    if on_gpus() {
        let mut gpus = gpus(2, Schedule::Hardware).expect("GPUs");
        let data = inputs(gpus.count(), 64, 0);
        let refused = two_all_reduces(
            &mut gpus,
            broken,
            [&data, &data],
            LaunchShape::linear(1, 32),
        )
        .expect_err("an emulator-only variant is refused on GPUs");
        assert!(refused.to_string().contains("emulator-only"), "{refused}");
        return;
    }
    let mut runner = TestRunner::new(cases(false, 0, 16, file!()));
    runner
        .run(
            &(length(), devices(), blocks(), any_threads(), any::<u64>()),
            |(n, devices, blocks, threads, seed)| {
                let mut gpus = emulated(devices, Schedule::Hardware);
                let data = inputs(devices, n, seed);
                let shape = LaunchShape::linear(blocks, threads);
                let outcome =
                    two_all_reduces(&mut gpus, broken, [&data, &data], shape).map_err(fail)?;
                let findings = &outcome.report.findings;
                prop_assert!(broken.expect.is_shown_by(findings, None), "{findings:#?}");
                let stuck = findings
                    .iter()
                    .find(|f| f.kind == harness::FindingKind::StreamsStuck)
                    .expect("a stuck finding");
                for device in 0..devices {
                    let stop = format!("device {device}'s stream 0, operation ");
                    prop_assert!(stuck.why.contains(&stop), "{stop}: {}", stuck.why);
                }
                Ok(())
            },
        )
        .unwrap();
}

/// NCCL cannot run on the emulator; its row says so in one sentence instead of failing.
#[test]
fn the_nccl_row_says_why_it_is_missing_on_the_emulator() {
    let mut gpus =
        harness::Gpus::open(harness::BackendChoice::Emu, 2, 2).expect("the emulator always opens");
    let times = gpus
        .time_nccl_all_reduce_ms(&[1024, 4096], 1)
        .expect("no error");
    assert_eq!(times.len(), 2);
    for time in times {
        match time {
            harness::VendorTiming::Unavailable(why) => {
                assert!(why.contains("NCCL runs only on NVIDIA GPUs"), "{why}")
            }
            other => panic!("a time on the emulator: {other:?}"),
        }
    }
}
