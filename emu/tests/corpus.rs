//! Corpus tests: real NVRTC PTX, fixed kernels must be right and clean, broken ones must be
//! caught at their `// BUG:` line.

// Test helpers panic with context on purpose; a failed unwrap is a failed test.
#![allow(clippy::unwrap_used)]

use ptx_emu::*;

mod corpus_support;
use corpus_support::*;

#[test]
fn racy_increment_loses_updates_and_is_reported_at_line_9() {
    let m = module("kernels/ptx/ch4_atomics/01_racy_increment.ptx");
    let mut emu = Emulator::new();
    let x = emu.alloc(4, "x");
    let r = emu
        .launch(
            &m,
            "racy_increment",
            &cfg(10, 16, 0),
            &[KernelArg::Ptr(x)],
            &RunOptions::default(),
        )
        .unwrap();
    let v = u32s(&emu, x, 1)[0];
    assert!(v < 160 && v > 0, "x = {v}");
    let rs = races(&r);
    assert!(!rs.is_empty(), "{}", show(&r));
    assert!(rs.iter().all(|f| f.lines() == vec![9]), "{}", show(&r));
    assert!(r.completed);
    let text = show(&r);
    assert!(text.contains("x[0]"), "{text}");
    assert!(
        text.contains("kernels/ch4_atomics/01_racy_increment.cu:9"),
        "{text}"
    );
}

#[test]
fn atomic_increment_counts_every_thread_cleanly() {
    let m = module("kernels/ptx/ch4_atomics/02_atomic_increment.ptx");
    let mut emu = Emulator::new();
    let x = emu.alloc(4, "x");
    let r = emu
        .launch(
            &m,
            "atomic_increment",
            &cfg(10, 16, 0),
            &[KernelArg::Ptr(x)],
            &RunOptions::default(),
        )
        .unwrap();
    assert_eq!(u32s(&emu, x, 1)[0], 160);
    assert!(r.findings.is_empty(), "{}", show(&r));
    assert!(r.completed);
}

fn text_input(n: usize) -> Vec<u8> {
    // Deterministic bytes, some >= 128 so the skip path runs.
    let mut s = 12345u32;
    (0..n)
        .map(|_| {
            s = s.wrapping_mul(1_103_515_245).wrapping_add(12345);
            let r = (s >> 16) as u8;
            if r > 220 { r } else { b'a' + r % 26 }
        })
        .collect()
}

fn run_histogram(
    file: &str,
    entry: &str,
    grid: u32,
    block: u32,
) -> (Vec<u32>, Vec<u32>, RunReport) {
    let m = module(&format!("kernels/ptx/ch4_atomics/{file}"));
    let mut emu = Emulator::new();
    let text = text_input(3000);
    let mut expect = vec![0u32; 128];
    for &c in &text {
        if c < 128 {
            expect[c as usize] += 1;
        }
    }
    let h = emu.alloc(128 * 4, "histo");
    let (args, dyn_shared) = if entry == "histogram_any_bins" {
        let vals: Vec<u32> = text.iter().map(|&c| c as u32).collect();
        let d = emu.alloc(vals.len() * 4, "values");
        put_u32(&mut emu, d, &vals);
        (
            vec![
                KernelArg::Ptr(d),
                KernelArg::U32(vals.len() as u32),
                KernelArg::Ptr(h),
                KernelArg::U32(128),
            ],
            512,
        )
    } else {
        let d = emu.alloc(text.len(), "text");
        emu.write(d, &text).unwrap();
        (
            vec![
                KernelArg::Ptr(d),
                KernelArg::U32(text.len() as u32),
                KernelArg::Ptr(h),
            ],
            0,
        )
    };
    let r = emu
        .launch(
            &m,
            entry,
            &cfg(grid, block, dyn_shared),
            &args,
            &RunOptions::default(),
        )
        .unwrap();
    (u32s(&emu, h, 128), expect, r)
}

#[test]
fn fixed_histograms_match_the_cpu_with_no_findings() {
    for (file, entry) in [
        (
            "03_histogram_global_atomics.ptx",
            "histogram_global_atomics",
        ),
        ("05_histogram_shared.ptx", "histogram_shared"),
        ("08_histogram_any_bins.ptx", "histogram_any_bins"),
    ] {
        for (grid, block) in [(4, 64), (3, 100), (1, 32)] {
            let (got, expect, r) = run_histogram(file, entry, grid, block);
            assert_eq!(got, expect, "{file} {grid}x{block}");
            assert!(
                r.findings.is_empty(),
                "{file} {grid}x{block}:\n{}",
                show(&r)
            );
            assert!(r.completed);
        }
    }
}

#[test]
fn histogram_races_are_reported_at_their_bug_lines() {
    for (file, entry) in [
        ("04_histogram_no_atomics", "histogram_no_atomics"),
        (
            "06_histogram_shared_no_merge_barrier",
            "histogram_shared_no_merge_barrier",
        ),
    ] {
        let line = bug_line(&format!("kernels/ch4_atomics/{file}.cu"));
        let (_, _, r) = run_histogram(&format!("{file}.ptx"), entry, 4, 64);
        let rs = races(&r);
        assert!(!rs.is_empty(), "{file}: no race\n{}", show(&r));
        assert!(
            rs.iter().any(|f| f.lines().contains(&line)),
            "{file}: line {line} not named\n{}",
            show(&r)
        );
    }
}

#[test]
fn histogram_one_bin_per_thread_runs() {
    let (got, expect, r) = run_histogram(
        "07_histogram_shared_one_bin_per_thread.ptx",
        "histogram_shared_one_bin_per_thread",
        2,
        128,
    );
    assert_eq!(got, expect, "{}", show(&r));
    // With 64 threads, bins 64.. are never zeroed: garbage in shared memory gives a wrong result.
    let (got, expect, _) = run_histogram(
        "07_histogram_shared_one_bin_per_thread.ptx",
        "histogram_shared_one_bin_per_thread",
        2,
        64,
    );
    assert_ne!(got, expect);
}

#[test]
fn mutex_increment_is_correct_and_not_reported() {
    let m = corpus("mutex_increment");
    let mut emu = Emulator::new();
    let mutex = emu.alloc(4, "mutex");
    let x = emu.alloc(4, "x");
    for schedule in [
        Schedule::Hardware,
        Schedule::Random { seed: 3 },
        Schedule::Adversarial { seed: 4 },
    ] {
        put_u32(&mut emu, x, &[0]);
        let opts = RunOptions {
            schedule,
            ..RunOptions::default()
        };
        let r = emu
            .launch(
                &m,
                "mutex_increment",
                &cfg(12, 64, 0),
                &[KernelArg::Ptr(mutex), KernelArg::Ptr(x)],
                &opts,
            )
            .unwrap();
        assert_eq!(u32s(&emu, x, 1)[0], 12, "{schedule:?}");
        assert!(r.findings.is_empty(), "{schedule:?}\n{}", show(&r));
        assert!(r.completed);
    }
}

#[test]
fn intra_warp_mutex_makes_progress() {
    let m = corpus("mutex_all_threads");
    let mut emu = Emulator::new();
    let mutex = emu.alloc(4, "mutex");
    let x = emu.alloc(4, "x");
    for schedule in [
        Schedule::Hardware,
        Schedule::Random { seed: 1 },
        Schedule::Adversarial { seed: 2 },
    ] {
        put_u32(&mut emu, x, &[0]);
        let opts = RunOptions {
            schedule,
            ..RunOptions::default()
        };
        let r = emu
            .launch(
                &m,
                "mutex_all_threads",
                &cfg(3, 48, 0),
                &[KernelArg::Ptr(mutex), KernelArg::Ptr(x)],
                &opts,
            )
            .unwrap();
        assert!(r.completed, "{schedule:?}\n{}", show(&r));
        assert_eq!(u32s(&emu, x, 1)[0], 144, "{schedule:?}");
        assert!(r.findings.is_empty(), "{schedule:?}\n{}", show(&r));
    }
}

#[test]
fn dot_with_mutex_is_correct_and_clean() {
    let m = corpus("dot_mutex");
    let mut emu = Emulator::new();
    let n = 3000usize;
    let a: Vec<f32> = (0..n).map(|i| (i % 7) as f32 * 0.5).collect();
    let b: Vec<f32> = (0..n).map(|i| (i % 5) as f32 - 2.0).collect();
    let expect: f64 = a.iter().zip(&b).map(|(x, y)| *x as f64 * *y as f64).sum();
    let (pa, pb) = (emu.alloc(n * 4, "a"), emu.alloc(n * 4, "b"));
    put_f32(&mut emu, pa, &a);
    put_f32(&mut emu, pb, &b);
    let c = emu.alloc(4, "c");
    let mutex = emu.alloc(4, "mutex");
    let r = emu
        .launch(
            &m,
            "dot_mutex",
            &cfg(5, 256, 0),
            &[
                KernelArg::Ptr(pa),
                KernelArg::Ptr(pb),
                KernelArg::Ptr(c),
                KernelArg::I32(n as i32),
                KernelArg::Ptr(mutex),
            ],
            &RunOptions::default(),
        )
        .unwrap();
    let got = f32s(&emu, c, 1)[0] as f64;
    assert!(
        (got - expect).abs() <= 1e-3 * expect.abs().max(1.0),
        "{got} vs {expect}"
    );
    assert!(r.findings.is_empty(), "{}", show(&r));
}

fn reduce(name: &str, n: usize, block: u32, opts: &RunOptions) -> (Vec<f32>, Vec<f32>, RunReport) {
    let m = corpus(name);
    let mut emu = Emulator::new();
    let data: Vec<f32> = (0..n).map(|i| ((i * 37) % 11) as f32).collect();
    let grid = n.div_ceil(block as usize) as u32;
    let pin = emu.alloc(n * 4, "in");
    put_f32(&mut emu, pin, &data);
    let pout = emu.alloc(grid as usize * 4, "out");
    let r = emu
        .launch(
            &m,
            name,
            &cfg(grid, block, block * 4),
            &[
                KernelArg::Ptr(pin),
                KernelArg::Ptr(pout),
                KernelArg::I32(n as i32),
            ],
            opts,
        )
        .unwrap();
    let expect = data
        .chunks(block as usize)
        .map(|c| c.iter().sum())
        .collect();
    (f32s(&emu, pout, grid as usize), expect, r)
}

#[test]
fn tree_reduction_is_correct_and_clean_under_every_schedule() {
    for schedule in [
        Schedule::Hardware,
        Schedule::Random { seed: 9 },
        Schedule::Adversarial { seed: 9 },
    ] {
        let opts = RunOptions {
            schedule,
            ..RunOptions::default()
        };
        let (got, expect, r) = reduce("tree_reduce", 1000, 128, &opts);
        assert_eq!(got, expect, "{schedule:?}");
        assert!(r.findings.is_empty(), "{schedule:?}\n{}", show(&r));
    }
}

#[test]
fn blocks_beyond_the_resident_ones_start_as_others_finish() {
    let all_resident = RunOptions::default();
    let two_resident = RunOptions {
        resident_threads: 2 * 128,
        ..RunOptions::default()
    };
    let (got, expect, r) = reduce("tree_reduce", 1000, 128, &two_resident);
    assert_eq!(got, expect);
    assert!(r.findings.is_empty(), "{}", show(&r));
    let (_, _, all) = reduce("tree_reduce", 1000, 128, &all_resident);
    assert_eq!(r.thread_instructions, all.thread_instructions);
}

#[test]
fn resident_blocks_waiting_for_a_block_not_yet_started_make_progress() {
    let m = corpus("flag_wait_last");
    let mut emu = Emulator::new();
    let (flag, arrived) = (emu.alloc(4, "flag"), emu.alloc(4, "arrived"));
    let grid = 5;
    let opts = RunOptions {
        resident_threads: 32,
        ..RunOptions::default()
    };
    let r = emu
        .launch(
            &m,
            "flag_wait_last",
            &cfg(grid, 32, 0),
            &[KernelArg::Ptr(flag), KernelArg::Ptr(arrived)],
            &opts,
        )
        .unwrap();
    assert!(r.completed, "{}", show(&r));
    assert_eq!(u32s(&emu, arrived, 1)[0], grid - 1);
    assert!(r.findings.is_empty(), "{}", show(&r));
}

#[test]
fn tree_reduction_without_barrier_is_a_race_at_its_bug_line() {
    let (_, _, r) = reduce("tree_reduce_no_sync", 512, 128, &RunOptions::default());
    let line = corpus_bug("tree_reduce_no_sync");
    let rs = races(&r);
    assert!(
        rs.iter().any(|f| f.lines().contains(&line)
            && matches!(
                f.kind,
                FindingKind::Race {
                    space: Space::Shared,
                    ..
                }
            )),
        "{}",
        show(&r)
    );
}

#[test]
fn barrier_inside_if_is_barrier_divergence() {
    let (_, _, r) = reduce("sync_in_if", 256, 128, &RunOptions::default());
    let line = corpus_bug("sync_in_if");
    let d: Vec<_> = r
        .findings
        .iter()
        .filter(|f| f.kind == FindingKind::BarrierDivergence)
        .collect();
    assert!(d.iter().any(|f| f.lines().contains(&line)), "{}", show(&r));
}

fn scan(name: &str, n: usize, opts: &RunOptions) -> (Vec<i32>, Vec<i32>, RunReport) {
    let m = corpus(name);
    let mut emu = Emulator::new();
    let data: Vec<i32> = (0..n).map(|i| (i % 5) as i32 + 1).collect();
    let pin = emu.alloc(n * 4, "in");
    put_u32(
        &mut emu,
        pin,
        &data.iter().map(|&x| x as u32).collect::<Vec<_>>(),
    );
    let pout = emu.alloc(n * 4, "out");
    let shared = if name == "scan_double_buffer" {
        2 * n as u32 * 4
    } else {
        n as u32 * 4
    };
    let r = emu
        .launch(
            &m,
            name,
            &cfg(1, n as u32, shared),
            &[
                KernelArg::Ptr(pin),
                KernelArg::Ptr(pout),
                KernelArg::I32(n as i32),
            ],
            opts,
        )
        .unwrap();
    let mut acc = 0;
    let expect = data.iter().map(|x| {
        acc += x;
        acc
    });
    (
        u32s(&emu, pout, n).into_iter().map(|x| x as i32).collect(),
        expect.collect(),
        r,
    )
}

#[test]
fn single_buffer_scan_is_a_race_and_wrong_under_adversarial() {
    let line = corpus_bug("scan_single_buffer");
    let (_, _, r) = scan("scan_single_buffer", 128, &RunOptions::default());
    assert!(
        races(&r).iter().any(|f| f.lines().contains(&line)),
        "{}",
        show(&r)
    );
    let wrong = (0..4).any(|seed| {
        let opts = RunOptions {
            schedule: Schedule::Adversarial { seed },
            ..RunOptions::default()
        };
        let (got, expect, _) = scan("scan_single_buffer", 128, &opts);
        got != expect
    });
    assert!(wrong, "adversarial schedules never exposed the race");
}

#[test]
fn double_buffer_scan_is_right_and_clean() {
    for schedule in [
        Schedule::Hardware,
        Schedule::Random { seed: 5 },
        Schedule::Adversarial { seed: 5 },
    ] {
        let opts = RunOptions {
            schedule,
            ..RunOptions::default()
        };
        let (got, expect, r) = scan("scan_double_buffer", 200, &opts);
        assert_eq!(got, expect, "{schedule:?}");
        assert!(r.findings.is_empty(), "{schedule:?}\n{}", show(&r));
    }
}

#[test]
fn blelloch_scan_is_right_and_clean() {
    let m = corpus("blelloch");
    let mut emu = Emulator::new();
    let n = 256usize;
    let data: Vec<f32> = (0..n).map(|i| (i % 3) as f32).collect();
    let pin = emu.alloc(n * 4, "in");
    put_f32(&mut emu, pin, &data);
    let pout = emu.alloc(n * 4, "out");
    for schedule in [Schedule::Hardware, Schedule::Adversarial { seed: 1 }] {
        let opts = RunOptions {
            schedule,
            ..RunOptions::default()
        };
        let r = emu
            .launch(
                &m,
                "blelloch",
                &cfg(1, n as u32 / 2, n as u32 * 4),
                &[
                    KernelArg::Ptr(pin),
                    KernelArg::Ptr(pout),
                    KernelArg::I32(n as i32),
                ],
                &opts,
            )
            .unwrap();
        let mut acc = 0.0;
        let expect: Vec<f32> = data
            .iter()
            .map(|x| {
                let e = acc;
                acc += x;
                e
            })
            .collect();
        assert_eq!(f32s(&emu, pout, n), expect);
        assert!(r.findings.is_empty(), "{}", show(&r));
    }
}

fn matmul(name: &str, n: usize) -> (Vec<f32>, Vec<f32>, RunReport) {
    let m = corpus(name);
    let mut emu = Emulator::new();
    let a: Vec<f32> = (0..n * n).map(|i| (i % 7) as f32 - 3.0).collect();
    let b: Vec<f32> = (0..n * n).map(|i| (i % 5) as f32 * 0.5).collect();
    let mut c = vec![0f32; n * n];
    for i in 0..n {
        for j in 0..n {
            c[i * n + j] = (0..n).map(|k| a[i * n + k] * b[k * n + j]).sum();
        }
    }
    let (pa, pb, pc) = (
        emu.alloc(n * n * 4, "A"),
        emu.alloc(n * n * 4, "B"),
        emu.alloc(n * n * 4, "C"),
    );
    put_f32(&mut emu, pa, &a);
    put_f32(&mut emu, pb, &b);
    let g = n.div_ceil(16) as u32;
    let r = emu
        .launch(
            &m,
            name,
            &LaunchConfig {
                grid: [g, g, 1],
                block: [16, 16, 1],
                dynamic_shared_bytes: 0,
            },
            &[
                KernelArg::Ptr(pa),
                KernelArg::Ptr(pb),
                KernelArg::Ptr(pc),
                KernelArg::I32(n as i32),
            ],
            &RunOptions::default(),
        )
        .unwrap();
    (f32s(&emu, pc, n * n), c, r)
}

#[test]
fn tiled_matmul_is_right_and_clean() {
    let (got, expect, r) = matmul("matmul_tiled", 40);
    for (g, e) in got.iter().zip(&expect) {
        assert!((g - e).abs() <= 1e-3 * e.abs().max(1.0), "{g} vs {e}");
    }
    assert!(r.findings.is_empty(), "{}", show(&r));
}

#[test]
fn tiled_matmul_without_second_barrier_is_a_race() {
    let (_, _, r) = matmul("matmul_tiled_no_second_sync", 40);
    let line = corpus_bug("matmul_tiled_no_second_sync");
    assert!(
        races(&r).iter().any(|f| f.lines().contains(&line)),
        "{}",
        show(&r)
    );
}

#[test]
fn life_step_matches_the_cpu() {
    let m = corpus("life_step");
    let mut emu = Emulator::new();
    let (w, h) = (37usize, 21usize);
    let cells: Vec<u8> = (0..w * h)
        .map(|i| ((i * 7 + i / 3) % 3 == 0) as u8)
        .collect();
    let mut expect = vec![0u8; w * h];
    for y in 0..h {
        for x in 0..w {
            let mut n = 0;
            for dy in [h - 1, 0, 1] {
                for dx in [w - 1, 0, 1] {
                    if dx == 0 && dy == 0 {
                        continue;
                    }
                    n += cells[((y + dy) % h) * w + (x + dx) % w];
                }
            }
            let alive = cells[y * w + x] == 1;
            expect[y * w + x] = (n == 3 || (alive && n == 2)) as u8;
        }
    }
    let (pin, pout) = (emu.alloc(w * h, "in"), emu.alloc(w * h, "out"));
    emu.write(pin, &cells).unwrap();
    let r = emu
        .launch(
            &m,
            "life_step",
            &LaunchConfig {
                grid: [w.div_ceil(16) as u32, h.div_ceil(16) as u32, 1],
                block: [16, 16, 1],
                dynamic_shared_bytes: 0,
            },
            &[
                KernelArg::Ptr(pin),
                KernelArg::Ptr(pout),
                KernelArg::I32(w as i32),
                KernelArg::I32(h as i32),
            ],
            &RunOptions::default(),
        )
        .unwrap();
    let mut got = vec![0u8; w * h];
    emu.read(pout, &mut got).unwrap();
    assert_eq!(got, expect);
    assert!(r.findings.is_empty(), "{}", show(&r));
}

#[test]
fn warp_shuffle_block_sum_is_right() {
    let m = corpus("warp_shuffle_sum");
    let mut emu = Emulator::new();
    let n = 5000usize;
    let data: Vec<f32> = (0..n).map(|i| (i % 4) as f32).collect();
    let pin = emu.alloc(n * 4, "in");
    put_f32(&mut emu, pin, &data);
    let pout = emu.alloc(3 * 4, "out");
    for schedule in [
        Schedule::Hardware,
        Schedule::Random { seed: 2 },
        Schedule::Adversarial { seed: 2 },
    ] {
        let opts = RunOptions {
            schedule,
            ..RunOptions::default()
        };
        let r = emu
            .launch(
                &m,
                "warp_shuffle_sum",
                &cfg(3, 256, 0),
                &[
                    KernelArg::Ptr(pin),
                    KernelArg::Ptr(pout),
                    KernelArg::I32(n as i32),
                ],
                &opts,
            )
            .unwrap();
        let total: f32 = f32s(&emu, pout, 3).iter().sum();
        assert_eq!(total, data.iter().sum::<f32>(), "{schedule:?}");
        assert!(r.findings.is_empty(), "{}", show(&r));
    }
}

#[test]
fn one_past_the_end_read_is_reported_with_thread_and_line() {
    let m = corpus("one_past_end");
    let mut emu = Emulator::new();
    let n = 100usize;
    let pin = emu.alloc(n * 4, "in");
    put_u32(&mut emu, pin, &(0..n as u32).collect::<Vec<_>>());
    let pout = emu.alloc((n + 1) * 4, "out");
    let opts = RunOptions {
        memcheck: false,
        ..RunOptions::default()
    };
    let r = emu
        .launch(
            &m,
            "one_past_end",
            &cfg(2, 64, 0),
            &[
                KernelArg::Ptr(pin),
                KernelArg::Ptr(pout),
                KernelArg::I32(n as i32),
            ],
            &opts,
        )
        .unwrap();
    let line = corpus_bug("one_past_end");
    let oob: Vec<_> = r
        .findings
        .iter()
        .filter(|f| {
            f.kind
                == FindingKind::OutOfBounds {
                    space: Space::Global,
                }
        })
        .collect();
    assert_eq!(oob.len(), 1, "{}", show(&r));
    let f = oob[0];
    assert_eq!(f.lines(), vec![line]);
    assert_eq!(
        f.accesses[0].thread,
        ThreadRef {
            block: [1, 0, 0],
            thread: [36, 0, 0]
        }
    );
    assert_eq!(
        f.location.as_ref().map(|l| (l.label.as_str(), l.index)),
        Some(("in", 100))
    );
    let mut expect: Vec<u32> = (0..n as u32).map(|x| x * 2).collect();
    expect.push(0);
    assert_eq!(u32s(&emu, pout, n + 1), expect);
    let text = f.to_string();
    assert!(
        text.contains("in[100]") && text.contains("block (1,0,0) thread (36,0,0)"),
        "{text}"
    );
}

#[test]
fn spinning_kernel_is_stopped_by_the_watchdog_within_seconds() {
    let m = corpus("spin_forever");
    let mut emu = Emulator::new();
    let flag = emu.alloc(4, "flag");
    let t = std::time::Instant::now();
    let r = emu
        .launch(
            &m,
            "spin_forever",
            &cfg(4, 64, 0),
            &[KernelArg::Ptr(flag)],
            &RunOptions::default(),
        )
        .unwrap();
    assert!(t.elapsed().as_secs() < 10, "took {:?}", t.elapsed());
    assert!(!r.completed);
    assert_eq!(r.findings.len(), 1, "{}", show(&r));
    let f = &r.findings[0];
    assert_eq!(f.kind, FindingKind::Stuck, "{f}");
    assert!(f.lines().contains(&corpus_bug("spin_forever")), "{f}");
    assert_eq!(f.threads.iter().map(|g| g.threads).sum::<u64>(), 256);
    // Two quiet windows and the one where the spinning starts, not the hard cap. The window
    // counts thread-steps, and a step of this loop under the hardware schedule is its three
    // instructions (`setp`, `bra`, then the load that others could see).
    const LOOP_STEP: u64 = 3;
    assert!(
        r.thread_instructions <= 4 * DEFAULT_WATCHDOG_WINDOW * LOOP_STEP,
        "{}",
        r.thread_instructions
    );
}

#[test]
fn the_step_budget_stays_a_hard_cap_below_the_watchdog() {
    let m = corpus("spin_forever");
    let mut emu = Emulator::new();
    let flag = emu.alloc(4, "flag");
    let opts = RunOptions {
        step_budget: 100_000,
        ..RunOptions::default()
    };
    let r = emu
        .launch(
            &m,
            "spin_forever",
            &cfg(4, 64, 0),
            &[KernelArg::Ptr(flag)],
            &opts,
        )
        .unwrap();
    assert_eq!(r.findings.len(), 1, "{}", show(&r));
    assert_eq!(r.findings[0].kind, FindingKind::StepBudgetExhausted);
    assert!(
        r.thread_instructions < 100_000 + 256 * 4,
        "{}",
        r.thread_instructions
    );
}

#[test]
fn the_watchdog_starts_blocks_that_stuck_resident_blocks_may_wait_for() {
    // Only one block fits at a time; the watchdog starts more (doubling) before it calls the
    // kernel stuck, so every block ends up spinning and none is left "not started".
    let m = corpus("spin_forever");
    let mut emu = Emulator::new();
    let flag = emu.alloc(4, "flag");
    let opts = RunOptions {
        resident_threads: 64,
        watchdog_window: 20_000,
        ..RunOptions::default()
    };
    let r = emu
        .launch(
            &m,
            "spin_forever",
            &cfg(16, 64, 0),
            &[KernelArg::Ptr(flag)],
            &opts,
        )
        .unwrap();
    let f = r
        .findings
        .iter()
        .find(|f| f.kind == FindingKind::Stuck)
        .expect("stuck finding");
    assert!(
        f.threads
            .iter()
            .all(|g| !g.state.starts_with("not started")),
        "{f}"
    );
    assert_eq!(
        f.threads.iter().map(|g| g.threads).sum::<u64>(),
        16 * 64,
        "{f}"
    );
}

#[test]
fn a_stuck_report_counts_blocks_that_never_started() {
    let m = corpus("spin_forever");
    let mut emu = Emulator::new();
    let flag = emu.alloc(4, "flag");
    let opts = RunOptions {
        resident_threads: 64,
        step_budget: 200_000,
        ..RunOptions::default()
    };
    let r = emu
        .launch(
            &m,
            "spin_forever",
            &cfg(64, 64, 0),
            &[KernelArg::Ptr(flag)],
            &opts,
        )
        .unwrap();
    let f = r
        .findings
        .iter()
        .find(|f| f.kind == FindingKind::StepBudgetExhausted)
        .expect("budget finding");
    let (waiting, spinning): (Vec<_>, Vec<_>) = f
        .threads
        .iter()
        .partition(|g| g.state.starts_with("not started"));
    let count = |groups: &[&ThreadGroup]| groups.iter().map(|g| g.threads).sum::<u64>();
    assert_eq!(count(&waiting) + count(&spinning), 64 * 64, "{f}");
    assert!(count(&waiting) > 0 && count(&spinning) >= 64, "{f}");
    assert!(f.lines().contains(&corpus_bug("spin_forever")), "{f}");
}

#[test]
fn inter_block_flag_wait_makes_progress_and_is_clean() {
    let m = corpus("flag_wait");
    let mut emu = Emulator::new();
    let (flag, data, out) = (
        emu.alloc(4, "flag"),
        emu.alloc(4, "data"),
        emu.alloc(4, "out"),
    );
    for schedule in [
        Schedule::Hardware,
        Schedule::Random { seed: 8 },
        Schedule::Adversarial { seed: 8 },
    ] {
        put_u32(&mut emu, flag, &[0]);
        let opts = RunOptions {
            schedule,
            ..RunOptions::default()
        };
        let r = emu
            .launch(
                &m,
                "flag_wait",
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
        assert_eq!(u32s(&emu, out, 1)[0], 43);
        assert!(r.findings.is_empty(), "{schedule:?}\n{}", show(&r));
    }
}

#[test]
fn calls_and_local_memory() {
    let m = corpus("calls_and_local");
    let mut emu = Emulator::new();
    let n = 40usize;
    let input: Vec<i32> = (0..n as i32).map(|i| i * 13 - 200).collect();
    let pin = emu.alloc(n * 4, "in");
    put_u32(
        &mut emu,
        pin,
        &input.iter().map(|&x| x as u32).collect::<Vec<_>>(),
    );
    let (pout, pd) = (emu.alloc(n * 4, "out"), emu.alloc(n * 8, "dout"));
    let pick = 3;
    let r = emu
        .launch(
            &m,
            "calls_and_local",
            &cfg(2, 32, 0),
            &[
                KernelArg::Ptr(pin),
                KernelArg::Ptr(pout),
                KernelArg::Ptr(pd),
                KernelArg::I32(n as i32),
                KernelArg::I32(pick),
            ],
            &RunOptions::default(),
        )
        .unwrap();
    assert!(r.findings.is_empty(), "{}", show(&r));
    let got = f32s(&emu, pout, n);
    let mut d = vec![0u8; n * 8];
    emu.read(pd, &mut d).unwrap();
    for (i, &x) in input.iter().enumerate() {
        let scratch: Vec<i32> = (0..8)
            .map(|k| (x + k) * if k & 1 == 1 { -1 } else { 1 })
            .collect();
        let acc: i32 = (0..8).map(|k| scratch[((k + pick) & 7) as usize]).sum();
        let e = (acc as f32).clamp(-100.0, 100.0) * 1.5;
        assert_eq!(got[i], e, "i={i}");
        let dv = f64::from_le_bytes(d[i * 8..i * 8 + 8].try_into().unwrap());
        assert_eq!(dv, x as f64 * 2.0);
    }
}

#[test]
fn race_report_names_array_threads_and_both_lines() {
    let (_, _, r) = scan("scan_single_buffer", 64, &RunOptions::default());
    let f = races(&r).into_iter().next().expect("a race");
    let text = f.to_string();
    assert!(text.starts_with("race ("), "{text}");
    assert!(text.contains("on shared memory: buf["), "{text}");
    assert_eq!(
        text.matches("emu/tests/corpus/scan_single_buffer.cu:14")
            .count(),
        2,
        "{text}"
    );
    assert_eq!(text.matches("block (0,0,0) thread (").count(), 2, "{text}");
    assert!(f.count > 1, "{text}");
    let (_, _, r) = run_histogram("04_histogram_no_atomics.ptx", "histogram_no_atomics", 4, 64);
    let text = show(&r);
    assert!(text.contains("on global memory: histo["), "{text}");
}
