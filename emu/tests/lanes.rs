//! The lanes schedule (`Schedule::Lanes`): a warp's lanes run apart, as independent thread
//! scheduling lets them, so races that lockstep orders are seen; and where CUDA makes lanes
//! meet, they still do.

// The instruction tests' shared support unwraps what a hand-written kernel cannot fail.
#![allow(clippy::unwrap_used)]

mod instruction_support;

use instruction_support::*;
use ptx_emu::*;

/// Runs `body` on one warp of 32 threads under `schedule`; the output as words.
fn run_warp(body: &str, schedule: Schedule) -> (Vec<u32>, RunReport) {
    let src = kernel("", body);
    let m = Module::parse(&src).unwrap_or_else(|e| panic!("{e}\n{src}"));
    let mut emu = Emulator::new();
    let out = emu.alloc(64 * 32, "out");
    let options = RunOptions {
        schedule,
        ..RunOptions::default()
    };
    let config = LaunchConfig {
        grid: [1, 1, 1],
        block: [32, 1, 1],
        dynamic_shared_bytes: 0,
    };
    let report = emu
        .launch(&m, "t", &config, &[KernelArg::Ptr(out)], &options)
        .unwrap_or_else(|e| panic!("{e}\n{src}"));
    let mut bytes = vec![0u8; 64 * 32];
    emu.read(out, &mut bytes).expect("the output");
    let words = (0..bytes.len() / 4).map(|i| u32_at(&bytes, i)).collect();
    (words, report)
}

fn races(report: &RunReport) -> usize {
    report
        .findings
        .iter()
        .filter(|f| matches!(f.kind, FindingKind::Race { .. }))
        .count()
}

const SEEDS: std::ops::Range<u64> = 0..24;

/// Every lane adds 1 to a counter (word 2 of thread 0's output); lane 31 then reads it, with
/// `between` in between, and stores what it read in its own output's word 1.
fn last_lane_reads_the_count(between: &str) -> String {
    format!(
        "atom.global.add.u32 %r1, [%rd0+8], 1;
         {between}
         setp.ne.u32 %p1, %r0, 31;
         @%p1 bra DONE;
         ld.global.u32 %r2, [%rd0+8];
         st.global.u32 [%rd39+4], %r2;
         DONE:"
    )
}

#[test]
fn lanes_take_atomic_tickets_out_of_lane_order() {
    let body = "atom.global.add.u32 %r1, [%rd0+8], 1; st.global.u32 [%rd39+4], %r1;";
    let tickets = |words: &[u32]| (0..32).map(|l| words[l * 16 + 1]).collect::<Vec<_>>();
    let in_order: Vec<u32> = (0..32).collect();
    let (words, _) = run_warp(body, Schedule::Hardware);
    assert_eq!(tickets(&words), in_order, "lockstep: lane l draws ticket l");
    let apart = SEEDS
        .filter(|&seed| {
            let (words, _) = run_warp(body, Schedule::Lanes { seed });
            let mut drawn = tickets(&words);
            drawn.sort_unstable();
            assert_eq!(drawn, in_order, "seed {seed}: every ticket drawn once");
            tickets(&words) != in_order
        })
        .count();
    assert!(
        apart > SEEDS.end as usize / 2,
        "only {apart} seeds ran lanes apart"
    );
}

#[test]
fn a_read_ordered_only_by_lockstep_is_a_race_on_the_lanes_schedule() {
    let body = last_lane_reads_the_count("");
    let (words, report) = run_warp(&body, Schedule::Hardware);
    assert_eq!(
        words[31 * 16 + 1],
        32,
        "lockstep: lane 31 adds last, then reads"
    );
    assert!(report.findings.is_empty(), "{:?}", report.findings);
    let mut seen = 0;
    for seed in SEEDS {
        let (_, report) = run_warp(&body, Schedule::Lanes { seed });
        let (_, again) = run_warp(&body, Schedule::Lanes { seed });
        assert_eq!(
            report.findings, again.findings,
            "seed {seed}: one seed, one run"
        );
        if races(&report) > 0 {
            seen += 1;
            let text = report.findings[0].to_string();
            assert!(text.contains("the schedule lanes:"), "{text}");
            // the atomic of one side is named as what it is, not as a missing order
            assert!(text.contains("one of the two is an atomic"), "{text}");
            assert!(
                text.contains("__syncwarp() between them orders them"),
                "{text}"
            );
        }
    }
    assert!(
        seen > SEEDS.end as usize / 2,
        "only {seen} seeds showed the race"
    );
}

#[test]
fn a_syncwarp_orders_the_read_on_every_seed() {
    let body = last_lane_reads_the_count("bar.warp.sync -1;");
    for seed in SEEDS {
        let (words, report) = run_warp(&body, Schedule::Lanes { seed });
        assert!(
            report.findings.is_empty(),
            "seed {seed}: {:?}",
            report.findings
        );
        assert_eq!(words[31 * 16 + 1], 32, "seed {seed}");
    }
}

#[test]
fn a_syncwarp_only_the_reader_takes_part_in_is_explained_not_prescribed() {
    // The learner's attempt: the __syncwarp() inside the `if`, with only the reading lane in
    // its mask. It orders nothing, and the report must not tell them to add what they wrote.
    let body = "atom.global.add.u32 %r1, [%rd0+8], 1;
         setp.ne.u32 %p1, %r0, 31;
         @%p1 bra DONE;
         bar.warp.sync 0x80000000;
         ld.global.u32 %r2, [%rd0+8];
         st.global.u32 [%rd39+4], %r2;
         DONE:";
    let reported: Vec<String> = SEEDS
        .filter_map(|seed| {
            let (_, report) = run_warp(body, Schedule::Lanes { seed });
            report.findings.first().map(ToString::to_string)
        })
        .collect();
    assert!(
        reported.len() > SEEDS.end as usize / 2,
        "only {} seeds showed the race",
        reported.len()
    );
    for text in reported {
        assert!(
            text.contains(
                "a __syncwarp() orders them only when both lanes take part in the same one"
            ),
            "{text}"
        );
        assert!(
            !text.contains("__syncwarp() between them orders them"),
            "{text}"
        );
    }
}

#[test]
fn shuffles_and_votes_still_meet_every_lane() {
    // Each lane stores, loads back, then sums the warp's values with xor shuffles and counts
    // the lanes with a ballot: the loads split the warp, the shuffles bring it back together.
    let body = "st.global.u32 [%rd39+4], %r0;
         ld.global.u32 %r1, [%rd39+4];
         shfl.sync.bfly.b32 %r2, %r1, 16, 31, -1; add.u32 %r1, %r1, %r2;
         shfl.sync.bfly.b32 %r2, %r1, 8, 31, -1; add.u32 %r1, %r1, %r2;
         shfl.sync.bfly.b32 %r2, %r1, 4, 31, -1; add.u32 %r1, %r1, %r2;
         shfl.sync.bfly.b32 %r2, %r1, 2, 31, -1; add.u32 %r1, %r1, %r2;
         shfl.sync.bfly.b32 %r2, %r1, 1, 31, -1; add.u32 %r1, %r1, %r2;
         setp.ne.u32 %p1, %r0, 99;
         vote.sync.ballot.b32 %r3, %p1, -1;
         st.global.u32 [%rd39+8], %r1;
         st.global.u32 [%rd39+12], %r3;";
    for seed in SEEDS {
        let (words, report) = run_warp(body, Schedule::Lanes { seed });
        assert!(
            report.findings.is_empty(),
            "seed {seed}: {:?}",
            report.findings
        );
        for lane in 0..32 {
            assert_eq!(
                words[lane * 16 + 2],
                496,
                "seed {seed} lane {lane}: the sum"
            );
            assert_eq!(
                words[lane * 16 + 3],
                u32::MAX,
                "seed {seed} lane {lane}: the ballot"
            );
        }
    }
}

#[test]
fn lanes_storing_one_value_apart_are_not_a_race_but_different_values_are() {
    // Every lane loads (so the warp may split there), then stores to word 2 of thread 0's
    // output: the same value from every lane, as cooperative groups' reduce stores its result,
    // or each lane its own id.
    let same = "ld.global.u32 %r1, [%rd39+4]; mov.u32 %r2, 7; st.global.u32 [%rd0+8], %r2;";
    let own = "ld.global.u32 %r1, [%rd39+4]; st.global.u32 [%rd0+8], %r0;";
    let mut split = 0;
    for seed in SEEDS {
        let (words, report) = run_warp(same, Schedule::Lanes { seed });
        assert!(
            report.findings.is_empty(),
            "seed {seed}: {:?}",
            report.findings
        );
        assert_eq!(words[2], 7);
        let (_, report) = run_warp(own, Schedule::Lanes { seed });
        split += usize::from(races(&report) > 0);
    }
    assert!(split > 0, "no seed reported the stores of different values");
}
