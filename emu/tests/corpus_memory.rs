//! Corpus tests of memory: flag hand-offs between blocks, compare-and-swap loops, grids far
//! larger than the resident blocks, initcheck, and lanes meeting on one word.

// Test helpers panic with context on purpose; a failed unwrap is a failed test.
#![allow(clippy::unwrap_used)]

use ptx_emu::*;

mod corpus_support;
use corpus_support::*;

/// Runs a two-block flag hand-off (`flag`, `data`, `out`) under every schedule; returns `out[0]`
/// and the findings of each run.
fn flag_hand_off(name: &str, entry: &str) -> Vec<(Schedule, u32, RunReport)> {
    let schedules = [
        Schedule::Hardware,
        Schedule::Random { seed: 3 },
        Schedule::Adversarial { seed: 3 },
    ];
    flag_hand_off_under(name, entry, &schedules)
}

fn flag_hand_off_under(
    name: &str,
    entry: &str,
    schedules: &[Schedule],
) -> Vec<(Schedule, u32, RunReport)> {
    let m = corpus(name);
    let mut emu = Emulator::new();
    let (flag, data, out) = (
        emu.alloc(4, "flag"),
        emu.alloc(4, "data"),
        emu.alloc(4, "out"),
    );
    schedules
        .iter()
        .map(|&schedule| {
            for buffer in [flag, data, out] {
                put_u32(&mut emu, buffer, &[0]);
            }
            let opts = RunOptions {
                schedule,
                ..RunOptions::default()
            };
            let r = emu
                .launch(
                    &m,
                    entry,
                    &cfg(2, 32, 0),
                    &[
                        KernelArg::Ptr(flag),
                        KernelArg::Ptr(data),
                        KernelArg::Ptr(out),
                    ],
                    &opts,
                )
                .unwrap();
            assert!(r.completed, "{schedule:?}\n{}", show(&r));
            (schedule, u32s(&emu, out, 1)[0], r)
        })
        .collect()
}

#[test]
fn release_store_and_acquire_load_order_the_data_without_fences() {
    for (schedule, out, r) in
        flag_hand_off("flag_wait_release_acquire", "flag_wait_release_acquire")
    {
        assert_eq!(out, 43, "{schedule:?}");
        assert!(r.findings.is_empty(), "{schedule:?}\n{}", show(&r));
    }
}

/// A volatile or relaxed read of the flag acquires only with a fence after it (PTX's
/// fence-acquire pattern): without one, the data read races with the write it waited for.
#[test]
fn a_flag_read_without_acquire_leaves_the_data_read_racing() {
    for (name, entry) in [
        ("flag_wait_no_acquire", "flag_wait_no_acquire"),
        ("flag_wait_relaxed", "flag_wait_relaxed"),
    ] {
        let line = corpus_bug(name);
        for (schedule, out, r) in flag_hand_off(name, entry) {
            // the emulator's memory is sequentially consistent: the value is right all the same
            assert_eq!(out, 43, "{name} {schedule:?}");
            assert!(
                races(&r).iter().any(|f| f.lines().contains(&line)),
                "{name} {schedule:?}: no race at line {line}\n{}",
                show(&r)
            );
        }
    }
}

/// The adversarial schedule switches warps at every strong access to global memory, so a flag
/// published before its data is read while the data is still missing: the race becomes a wrong
/// answer, not only a report.
#[test]
fn a_flag_set_before_its_data_is_read_too_early_under_the_adversarial_schedule() {
    let name = "flag_before_data";
    let line = corpus_bug(name);
    for (schedule, out, r) in flag_hand_off(name, name) {
        assert!(
            races(&r).iter().any(|f| f.lines().contains(&line)),
            "{schedule:?}: no race at line {line}\n{}",
            show(&r)
        );
        if schedule == Schedule::Hardware {
            assert_eq!(
                out, 43,
                "in lockstep the data lands before block 1 reads it"
            );
        }
    }
    let adversarial: Vec<Schedule> = (1..=8).map(|seed| Schedule::Adversarial { seed }).collect();
    let outs: Vec<u32> = flag_hand_off_under(name, name, &adversarial)
        .into_iter()
        .map(|(_, out, _)| out)
        .collect();
    // 1: block 1 added 1 to the data's old 0
    assert!(outs.contains(&1), "{outs:?}");
}

fn f64s(emu: &Emulator, p: DevicePtr, n: usize) -> Vec<f64> {
    let mut b = vec![0u8; n * 8];
    emu.read(p, &mut b).unwrap();
    b.chunks(8)
        .map(|c| f64::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

fn put_f64(emu: &mut Emulator, p: DevicePtr, v: &[f64]) {
    let b: Vec<u8> = v.iter().flat_map(|x| x.to_le_bytes()).collect();
    emu.write(p, &b).unwrap();
}

const ALL_SCHEDULES: [Schedule; 3] = [
    Schedule::Hardware,
    Schedule::Random { seed: 5 },
    Schedule::Adversarial { seed: 6 },
];

/// Runs a `(x, sum, [seen,] n)` CAS-loop kernel on 5 × 64 threads; x holds integers, so every
/// order of the additions gives the same sum.
fn cas_double_run(name: &str, schedule: Schedule) -> (f64, RunReport) {
    let m = corpus(name);
    let mut emu = Emulator::new();
    let n = 300usize;
    let xs: Vec<f64> = (0..n).map(|i| (i % 17) as f64).collect();
    let x = emu.alloc(n * 8, "x");
    put_f64(&mut emu, x, &xs);
    let sum = emu.alloc(8, "sum");
    let mut args = vec![KernelArg::Ptr(x), KernelArg::Ptr(sum)];
    if name == "cas_seed_also_stored" {
        args.push(KernelArg::Ptr(emu.alloc(n * 8, "seen")));
    }
    args.push(KernelArg::I32(n as i32));
    let opts = RunOptions {
        schedule,
        ..RunOptions::default()
    };
    let r = emu.launch(&m, name, &cfg(5, 64, 0), &args, &opts).unwrap();
    assert!(r.completed, "{schedule:?}\n{}", show(&r));
    assert_eq!(
        f64s(&emu, sum, 1)[0],
        xs.iter().sum::<f64>(),
        "{schedule:?}"
    );
    (f64s(&emu, sum, 1)[0], r)
}

#[test]
fn the_guides_cas_loop_for_double_is_correct_and_not_reported() {
    for schedule in ALL_SCHEDULES {
        let (_, r) = cas_double_run("cas_add_double", schedule);
        assert!(r.findings.is_empty(), "{schedule:?}\n{}", show(&r));
    }
}

#[test]
fn a_cas_loop_with_a_break_is_correct_and_not_reported() {
    let m = corpus("cas_increment_break");
    for schedule in ALL_SCHEDULES {
        let mut emu = Emulator::new();
        let count = emu.alloc(4, "count");
        let opts = RunOptions {
            schedule,
            ..RunOptions::default()
        };
        let r = emu
            .launch(
                &m,
                "cas_increment_break",
                &cfg(4, 96, 0),
                &[KernelArg::Ptr(count)],
                &opts,
            )
            .unwrap();
        assert_eq!(u32s(&emu, count, 1)[0], 4 * 96, "{schedule:?}");
        assert!(r.findings.is_empty(), "{schedule:?}\n{}", show(&r));
        assert!(r.completed);
    }
}

#[test]
fn a_cas_seed_whose_value_is_also_stored_is_a_race_at_its_read() {
    let bug = corpus_bug("cas_seed_also_stored");
    for schedule in ALL_SCHEDULES {
        let (_, r) = cas_double_run("cas_seed_also_stored", schedule);
        let rs = races(&r);
        assert!(!rs.is_empty(), "{schedule:?}: no race reported");
        for f in &rs {
            // Every race is the plain read of sum against another thread's CAS.
            assert_eq!(f.location.as_ref().unwrap().label, "sum", "{f}");
            let ops: Vec<(AccessOp, u32)> = f.accesses.iter().map(|a| (a.op, a.at.line)).collect();
            assert!(ops.contains(&(AccessOp::Read, bug)), "{schedule:?}\n{f}");
            assert!(ops.iter().any(|&(op, _)| op == AccessOp::Atomic), "{f}");
        }
        assert_eq!(r.findings.len(), rs.len(), "{}", show(&r));
    }
}

// ---- scale: any legal grid, bounded memory ----

/// saxpy over `n` floats on 1024-thread blocks; returns y and the report.
fn saxpy_run(n: usize, opts: &RunOptions) -> (Vec<f32>, Vec<f32>, RunReport) {
    let m = corpus("saxpy");
    let mut emu = Emulator::new();
    let xs: Vec<f32> = (0..n).map(|i| (i % 1000) as f32).collect();
    let ys: Vec<f32> = (0..n).map(|i| (i % 7) as f32).collect();
    let x = emu.alloc(n * 4, "x");
    let y = emu.alloc(n * 4, "y");
    put_f32(&mut emu, x, &xs);
    put_f32(&mut emu, y, &ys);
    let grid = n.div_ceil(1024) as u32;
    let args = [
        KernelArg::F32(2.0),
        KernelArg::Ptr(x),
        KernelArg::Ptr(y),
        KernelArg::I32(n as i32),
    ];
    let r = emu
        .launch(&m, "saxpy", &cfg(grid, 1024, 0), &args, opts)
        .unwrap();
    let want = xs.iter().zip(&ys).map(|(x, y)| 2.0 * x + y).collect();
    (f32s(&emu, y, n), want, r)
}

#[test]
fn a_grid_far_larger_than_the_resident_blocks_runs_in_waves_with_every_checker() {
    let few = RunOptions {
        resident_threads: 2048,
        ..RunOptions::default()
    };
    let (got, want, r) = saxpy_run(40 * 1024 + 17, &few);
    assert_eq!(got, want);
    assert!(r.findings.is_empty(), "{}", show(&r));
    assert!(r.completed);
}

#[test]
fn coalesced_accesses_keep_the_race_shadow_under_one_and_a_half_bytes_per_byte() {
    let n = 64 * 1024;
    let (got, want, r) = saxpy_run(n, &RunOptions::default());
    assert_eq!(got, want);
    let touched = (2 * n * 4) as f64;
    let per_byte = r.shadow_bytes as f64 / touched;
    assert!(
        (0.5..1.5).contains(&per_byte),
        "{} shadow bytes for {touched} bytes ({per_byte:.2} per byte)",
        r.shadow_bytes
    );
}

#[test]
fn a_2d_stencil_on_bytes_and_a_scatter_keep_the_shadow_small() {
    // Life on 256 × 256 cells with 16 × 16 blocks: rows cross block boundaries every 16 bytes.
    let m = corpus("life_step");
    let mut emu = Emulator::new();
    let side = 256usize;
    let inp = emu.alloc(side * side, "in");
    let out = emu.alloc(side * side, "out");
    let cells: Vec<u8> = (0..side * side).map(|i| u8::from(i % 3 == 0)).collect();
    emu.write(inp, &cells).unwrap();
    let r = emu
        .launch(
            &m,
            "life_step",
            &LaunchConfig {
                grid: [16, 16, 1],
                block: [16, 16, 1],
                dynamic_shared_bytes: 0,
            },
            &[
                KernelArg::Ptr(inp),
                KernelArg::Ptr(out),
                KernelArg::I32(side as i32),
                KernelArg::I32(side as i32),
            ],
            &RunOptions::default(),
        )
        .unwrap();
    assert!(r.findings.is_empty(), "{}", show(&r));
    // Reads across the torus's edges follow no pattern: at this width they are a quarter of
    // the chunks, and take a record per word.
    let per_byte = r.shadow_bytes as f64 / (2 * side * side) as f64;
    assert!(per_byte < 3.0, "life: {per_byte:.2} shadow bytes per byte");

    // A scatter through a permutation: every word of out written by an unrelated thread.
    let m = corpus("scatter");
    let mut emu = Emulator::new();
    let n = 1 << 14;
    let x = emu.alloc(n * 4, "x");
    let index = emu.alloc(n * 4, "index");
    let out = emu.alloc(n * 4, "out");
    put_f32(&mut emu, x, &(0..n).map(|i| i as f32).collect::<Vec<_>>());
    let perm: Vec<u32> = (0..n)
        .map(|i| (i.wrapping_mul(2_654_435_761) & (n - 1)) as u32)
        .collect();
    put_u32(&mut emu, index, &perm);
    let r = emu
        .launch(
            &m,
            "scatter",
            &cfg((n / 256) as u32, 256, 0),
            &[
                KernelArg::Ptr(x),
                KernelArg::Ptr(index),
                KernelArg::Ptr(out),
                KernelArg::I32(n as i32),
            ],
            &RunOptions::default(),
        )
        .unwrap();
    assert!(r.findings.is_empty(), "{}", show(&r));
    let got = f32s(&emu, out, n);
    assert!(
        perm.iter()
            .enumerate()
            .all(|(i, &p)| got[p as usize] == i as f32)
    );
    let per_byte = r.shadow_bytes as f64 / (3 * n * 4) as f64;
    assert!(
        per_byte < 2.0,
        "scatter: {per_byte:.2} shadow bytes per byte"
    );
}

#[test]
fn the_largest_1d_launch_runs_and_random_schedules_refuse_huge_grids_clearly() {
    let src =
        ".version 9.0\n.target sm_90\n.address_size 64\n.visible .entry nothing()\n{\n\tret;\n}\n";
    let m = Module::parse(src).unwrap();
    let mut emu = Emulator::new();
    let huge = cfg(65_535, 1024, 0);
    let unlimited = RunOptions {
        step_budget: u64::MAX,
        ..RunOptions::default()
    };
    let r = emu.launch(&m, "nothing", &huge, &[], &unlimited).unwrap();
    assert!(r.completed && r.findings.is_empty(), "{}", show(&r));
    assert_eq!(r.thread_instructions, 65_535 * 1024);
    let random = RunOptions {
        schedule: Schedule::Random { seed: 1 },
        ..RunOptions::default()
    };
    let e = emu
        .launch(&m, "nothing", &huge, &[], &random)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("start every block at once") && e.contains("hardware schedule runs any grid"),
        "{e}"
    );
    let too_wide = cfg(1 << 31, 1, 0);
    let e = emu
        .launch(&m, "nothing", &too_wide, &[], &RunOptions::default())
        .unwrap_err()
        .to_string();
    assert!(e.contains("x is limited to 2147483647"), "{e}");
}

// ---- initcheck ----

fn reduce_assumes_256(block: u32, opts: &RunOptions) -> (Vec<f32>, RunReport) {
    let m = corpus("reduce_assumes_256");
    let mut emu = Emulator::new();
    let n = 2 * block as usize;
    let x = emu.alloc(n * 4, "x");
    put_f32(&mut emu, x, &vec![1.0; n]);
    let partial = emu.alloc(8, "partial");
    let args = [
        KernelArg::Ptr(x),
        KernelArg::Ptr(partial),
        KernelArg::I32(n as i32),
    ];
    let r = emu
        .launch(&m, "reduce_assumes_256", &cfg(2, block, 0), &args, opts)
        .unwrap();
    (f32s(&emu, partial, 2), r)
}

#[test]
fn a_tree_that_assumes_256_threads_reads_shared_memory_nobody_wrote() {
    let bug = corpus_bug("reduce_assumes_256");
    let (sums, r) = reduce_assumes_256(200, &RunOptions::default());
    assert!(sums.iter().all(|&s| s != 200.0), "{sums:?}");
    assert_eq!(r.findings.len(), 1, "{}", show(&r));
    let f = &r.findings[0];
    assert_eq!(
        f.kind,
        FindingKind::UninitializedRead {
            space: Space::Shared
        }
    );
    assert_eq!(f.lines(), vec![bug]);
    // Threads 72..128 of each block read s[200..256) at the first step.
    assert_eq!(f.count, 2 * 56, "{f}");
    assert_eq!(f.location.as_ref().unwrap().to_string(), "s[200]");
    assert_eq!(f.accesses[0].thread.thread, [72, 0, 0]);
    // With 256 threads every element it reads was written: exact and silent, under every
    // schedule.
    for schedule in ALL_SCHEDULES {
        let opts = RunOptions {
            schedule,
            ..RunOptions::default()
        };
        let (sums, r) = reduce_assumes_256(256, &opts);
        assert_eq!(sums, [256.0, 256.0]);
        assert!(r.findings.is_empty(), "{schedule:?}\n{}", show(&r));
    }
    let off = RunOptions {
        initcheck: false,
        ..RunOptions::default()
    };
    assert!(reduce_assumes_256(200, &off).1.findings.is_empty());
}

#[test]
fn global_buffers_allocated_uninitialized_are_checked_until_written() {
    let m = corpus("accumulate_into_output");
    let bug = corpus_bug("accumulate_into_output");
    let n = 96usize;
    let mut emu = Emulator::new();
    let x = emu.alloc(n * 4, "x");
    put_f32(&mut emu, x, &vec![1.0; n]);
    let run = |emu: &mut Emulator, out: DevicePtr, opts: &RunOptions| {
        let args = [
            KernelArg::Ptr(x),
            KernelArg::Ptr(out),
            KernelArg::I32(n as i32),
        ];
        emu.launch(&m, "accumulate_into_output", &cfg(3, 32, 0), &args, opts)
            .unwrap()
    };
    // Nothing wrote out: every thread's read is reported, at the BUG line.
    let out = emu.alloc_uninit(n * 4, "out");
    let r = run(&mut emu, out, &RunOptions::default());
    assert_eq!(r.findings.len(), 1, "{}", show(&r));
    let f = &r.findings[0];
    assert_eq!(
        f.kind,
        FindingKind::UninitializedRead {
            space: Space::Global
        }
    );
    assert_eq!((f.lines(), f.count), (vec![bug], n as u64), "{f}");
    assert_eq!(f.location.as_ref().unwrap().to_string(), "out[0]");
    // That launch wrote every element: the next one reads initialized memory.
    assert!(
        run(&mut emu, out, &RunOptions::default())
            .findings
            .is_empty()
    );

    // The host initialized the first half: only the second half is reported.
    let out = emu.alloc_uninit(n * 4, "out2");
    put_f32(&mut emu, out, &vec![0.0; n / 2]);
    let r = run(&mut emu, out, &RunOptions::default());
    assert_eq!(r.findings.len(), 1, "{}", show(&r));
    assert_eq!(r.findings[0].count, (n / 2) as u64);
    assert_eq!(
        r.findings[0].location.as_ref().unwrap().to_string(),
        "out2[48]"
    );
    assert_eq!(f32s(&emu, out, 1)[0], 1.0);

    // A zeroed buffer (Emulator::alloc), and initcheck off, say nothing.
    let zeroed = emu.alloc(n * 4, "zeroed");
    assert!(
        run(&mut emu, zeroed, &RunOptions::default())
            .findings
            .is_empty()
    );
    let off = RunOptions {
        initcheck: false,
        ..RunOptions::default()
    };
    let fresh = emu.alloc_uninit(n * 4, "fresh");
    assert!(run(&mut emu, fresh, &off).findings.is_empty());
}

#[test]
fn two_half_warp_groups_sync_and_shuffle_on_their_own() {
    let mut emu = Emulator::new();
    let out = emu.alloc(32 * 4, "out");
    let r = launch_corpus(
        &mut emu,
        "half_warp_groups",
        &cfg(1, 32, 0),
        &[KernelArg::Ptr(out)],
        &RunOptions::default(),
    );
    assert!(r.findings.is_empty(), "{}", show(&r));
    let lower: u32 = (0..16).sum();
    let upper: u32 = (16..32).sum();
    let expected: Vec<u32> = (0..32u32)
        .map(|lane| (lane ^ 1) + 1000 * if lane < 16 { lower } else { upper })
        .collect();
    assert_eq!(u32s(&emu, out, 32), expected);
}

#[test]
fn overlapping_syncwarp_masks_are_a_mismatch() {
    let mut emu = Emulator::new();
    let out = emu.alloc(32 * 4, "out");
    let r = launch_corpus(
        &mut emu,
        "overlapping_masks",
        &cfg(1, 32, 0),
        &[KernelArg::Ptr(out)],
        &RunOptions::default(),
    );
    let f = only(
        &r,
        FindingKind::WarpSync {
            problem: WarpSyncProblem::MaskMismatch,
        },
    );
    assert_eq!(f.lines(), vec![corpus_bug("overlapping_masks")], "{f}");
    let text = f.to_string();
    assert!(
        text.contains("__syncwarp(0x0000ffff)") && text.contains("__syncwarp(0xffffffff)"),
        "{text}"
    );
}

#[test]
fn warp_size_and_24_bit_multiplies_run() {
    let mut emu = Emulator::new();
    let out = emu.alloc(128 * 4, "out");
    let r = launch_corpus(
        &mut emu,
        "warp_size_math",
        &cfg(2, 64, 0),
        &[KernelArg::Ptr(out)],
        &RunOptions::default(),
    );
    assert!(r.findings.is_empty(), "{}", show(&r));
    let expected: Vec<u32> = (0..128u32)
        .map(|i| {
            let (block, thread) = (i / 64, i % 64);
            1000 * (thread / 32) + 10 * (thread % 32 % 8) + block
        })
        .collect();
    assert_eq!(u32s(&emu, out, 128), expected);
}

#[test]
fn lanes_storing_one_value_to_one_word_are_not_a_race() {
    let mut emu = Emulator::new();
    let input = emu.alloc(64 * 4, "in");
    put_u32(&mut emu, input, &(0..64).collect::<Vec<u32>>());
    let out = emu.alloc(64 * 4, "out");
    let r = launch_corpus(
        &mut emu,
        "same_value_stores",
        &cfg(1, 64, 0),
        &[KernelArg::Ptr(input), KernelArg::Ptr(out)],
        &RunOptions::default(),
    );
    assert!(r.findings.is_empty(), "{}", show(&r));
    assert_eq!(u32s(&emu, out, 64), vec![(0..64).sum::<u32>(); 64]);
}

#[test]
fn lanes_storing_different_values_to_one_word_race() {
    let mut emu = Emulator::new();
    let out = emu.alloc(64 * 4, "out");
    let r = launch_corpus(
        &mut emu,
        "different_value_stores",
        &cfg(1, 64, 0),
        &[KernelArg::Ptr(out)],
        &RunOptions::default(),
    );
    let text = show(&r);
    assert!(
        r.findings
            .iter()
            .all(|f| f.lines() == vec![corpus_bug("different_value_stores")])
            && text.contains("race (write-after-write) on shared memory: slot[0]"),
        "{text}"
    );
}

#[test]
fn atomic_adds_on_packed_and_single_halves_are_exact() {
    let mut emu = Emulator::new();
    let pairs = emu.alloc(4 * 4, "pairs");
    let bf_pairs = emu.alloc(4 * 4, "bf_pairs");
    let halves = emu.alloc(8 * 2, "halves");
    let r = launch_corpus(
        &mut emu,
        "half_atomics",
        &cfg(2, 128, 0),
        &[
            KernelArg::Ptr(pairs),
            KernelArg::Ptr(bf_pairs),
            KernelArg::Ptr(halves),
        ],
        &RunOptions::default(),
    );
    assert!(r.findings.is_empty(), "{}", show(&r));
    // 64 threads per pair word: (1, 0.5) × 64 = (64, 32) in f16, (1, 2) × 64 = (64, 128) in
    // bf16; 32 threads per half: 0.25 × 32 = 8.
    let f16_64_32 = (0x5000u32 << 16) | 0x5400;
    let bf16_64_128 = (0x4300u32 << 16) | 0x4280;
    assert_eq!(u32s(&emu, pairs, 4), vec![f16_64_32; 4]);
    assert_eq!(u32s(&emu, bf_pairs, 4), vec![bf16_64_128; 4]);
    let mut bytes = vec![0u8; 16];
    emu.read(halves, &mut bytes).unwrap();
    let eight = 0x4800u16;
    assert!(
        bytes
            .chunks(2)
            .all(|c| u16::from_le_bytes([c[0], c[1]]) == eight),
        "{bytes:?}"
    );
}
