//! Corpus tests: real NVRTC PTX, fixed kernels must be right and clean, broken ones must be
//! caught at their `// BUG:` line.

// Test helpers panic with context on purpose; a failed unwrap is a failed test.
#![allow(clippy::unwrap_used)]

use ptx_emu::*;

fn module(path: &str) -> Module {
    let full = format!("{}/../{path}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&full).unwrap_or_else(|e| panic!("{full}: {e}"));
    Module::parse(&text).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// The 1-based line of the `// BUG:` marker in a .cu file.
fn bug_line(path: &str) -> u32 {
    let full = format!("{}/../{path}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&full).unwrap_or_else(|e| panic!("{full}: {e}"));
    let i = text
        .lines()
        .position(|l| l.contains("// BUG:"))
        .unwrap_or_else(|| panic!("{path} has no BUG line"));
    i as u32 + 1
}

fn cfg(grid: u32, block: u32, dyn_shared: u32) -> LaunchConfig {
    LaunchConfig {
        grid: [grid, 1, 1],
        block: [block, 1, 1],
        dynamic_shared_bytes: dyn_shared,
    }
}

fn u32s(emu: &Emulator, p: DevicePtr, n: usize) -> Vec<u32> {
    let mut b = vec![0u8; n * 4];
    emu.read(p, &mut b).unwrap();
    b.chunks(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

fn f32s(emu: &Emulator, p: DevicePtr, n: usize) -> Vec<f32> {
    u32s(emu, p, n).into_iter().map(f32::from_bits).collect()
}

fn put_u32(emu: &mut Emulator, p: DevicePtr, v: &[u32]) {
    let b: Vec<u8> = v.iter().flat_map(|x| x.to_le_bytes()).collect();
    emu.write(p, &b).unwrap();
}

fn put_f32(emu: &mut Emulator, p: DevicePtr, v: &[f32]) {
    put_u32(emu, p, &v.iter().map(|x| x.to_bits()).collect::<Vec<_>>());
}

fn show(r: &RunReport) -> String {
    r.findings.iter().map(|f| format!("{f}\n")).collect()
}

fn races(r: &RunReport) -> Vec<&Finding> {
    r.findings
        .iter()
        .filter(|f| matches!(f.kind, FindingKind::Race { .. }))
        .collect()
}

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

fn corpus(name: &str) -> Module {
    module(&format!("emu/tests/corpus/{name}.ptx"))
}

fn corpus_bug(name: &str) -> u32 {
    bug_line(&format!("emu/tests/corpus/{name}.cu"))
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
    // Two quiet windows and the one where the spinning starts, not the hard cap.
    assert!(
        r.thread_instructions <= 4 * DEFAULT_WATCHDOG_WINDOW,
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

// ---------------------------------------------------------------------------------------------
// printf, assert, clocks, the device heap, recursion, the watchdog and warp-sync masks

fn launch_corpus(
    emu: &mut Emulator,
    name: &str,
    config: &LaunchConfig,
    args: &[KernelArg],
    opts: &RunOptions,
) -> RunReport {
    emu.launch(&corpus(name), name, config, args, opts)
        .unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn only(r: &RunReport, kind: FindingKind) -> &Finding {
    assert_eq!(r.findings.len(), 1, "{}", show(r));
    assert_eq!(r.findings[0].kind, kind, "{}", show(r));
    &r.findings[0]
}

fn printf_formats(emu: &mut Emulator, opts: &RunOptions) -> RunReport {
    let values = emu.alloc(6 * 4, "values");
    put_f32(emu, values, &[1.5, -2.25, 1234.5678, 0.0, 3e-3, 100.0]);
    let label = emu.alloc(4, "label");
    emu.write(label, b"val\0").unwrap();
    let args = [
        KernelArg::Ptr(values),
        KernelArg::Ptr(label),
        KernelArg::I32(6),
    ];
    launch_corpus(emu, "printf_formats", &cfg(2, 4, 0), &args, opts)
}

/// What the host C library prints for the same format and arguments (see printf_formats.cu).
const PRINTF_FORMATS_OUTPUT: &str = "\
val[000] =    1.500 | 1.500000e-05 | 1.5e+06 | -2 0 0 0 0 0 a | 0 0 0 | 0    |    va|%
val[001] =   -2.250 | -2.250000e-05 | -2.25e+06 | -1 -1 3 ff FF 01 b | 8589934592 1000000007 3000000021 | 1    |    va|%
val[002] = 1234.568 | 1.234568e-02 | 1.23457e+09 | +0 -2 6 1fe 1FE 02 c | 17179869184 2000000014 6000000042 | 2    |    va|%
val[003] =    0.000 | 0.000000e+00 | 0 | +1 -3 9 2fd 2FD 03 d | 25769803776 3000000021 9000000063 | 3    |    va|%
val[004] =    0.003 | 3.000000e-08 | 3000 | +2 -4 12 3fc 3FC 04 e | 34359738368 4000000028 12000000084 | 4    |    va|%
val[005] =  100.000 | 9.999999e-04 | 1e+08 | +3 -5 15 4fb 4FB 05 f | 42949672960 5000000035 15000000105 | 5    |    va|%
";

#[test]
fn printf_prints_one_line_per_thread_with_c_formatting() {
    let mut emu = Emulator::new();
    let r = printf_formats(&mut emu, &RunOptions::default());
    assert!(r.findings.is_empty() && r.completed, "{}", show(&r));
    assert_eq!(r.printf_output(), PRINTF_FORMATS_OUTPUT);
    let threads: Vec<[u32; 3]> = r.printf.iter().map(|p| p.thread.thread).collect();
    assert_eq!(
        threads,
        [
            [0, 0, 0],
            [1, 0, 0],
            [2, 0, 0],
            [3, 0, 0],
            [0, 0, 0],
            [1, 0, 0]
        ]
    );
    assert_eq!(r.printf[5].thread.block, [1, 0, 0]);
    assert_eq!(r.printf_dropped, 0);
}

#[test]
fn printf_output_is_the_same_lines_under_every_schedule() {
    let mut sorted_hardware: Vec<&str> = PRINTF_FORMATS_OUTPUT.lines().collect();
    sorted_hardware.sort_unstable();
    for schedule in [
        Schedule::Random { seed: 3 },
        Schedule::Adversarial { seed: 3 },
    ] {
        let mut emu = Emulator::new();
        let opts = RunOptions {
            schedule,
            ..RunOptions::default()
        };
        let r = printf_formats(&mut emu, &opts);
        let out = r.printf_output();
        let mut lines: Vec<&str> = out.lines().collect();
        lines.sort_unstable();
        assert_eq!(lines, sorted_hardware, "{schedule:?}");
    }
}

#[test]
fn printf_beyond_the_buffer_is_counted_as_dropped() {
    let mut emu = Emulator::new();
    let first_two = PRINTF_FORMATS_OUTPUT
        .lines()
        .take(2)
        .map(|l| l.len() + 1)
        .sum::<usize>();
    let opts = RunOptions {
        printf_buffer_bytes: first_two,
        ..RunOptions::default()
    };
    let r = printf_formats(&mut emu, &opts);
    assert_eq!(r.printf.len(), 2);
    assert_eq!(r.printf_dropped, 4);
    assert!(
        r.printf_output()
            .ends_with("[4 more printf calls dropped: the printf buffer is full]\n"),
        "{}",
        r.printf_output()
    );
}

#[test]
fn a_failed_assert_is_a_finding_that_ends_the_launch_with_the_gpu_message() {
    let mut emu = Emulator::new();
    let input = emu.alloc(8 * 4, "in");
    put_u32(
        &mut emu,
        input,
        &[3, (-1i32) as u32, 4, (-5i32) as u32, 9, 2, 6, 5],
    );
    let out = emu.alloc(8 * 4, "out");
    let args = [
        KernelArg::Ptr(input),
        KernelArg::Ptr(out),
        KernelArg::I32(8),
    ];
    let r = launch_corpus(
        &mut emu,
        "assert_positive",
        &cfg(1, 8, 0),
        &args,
        &RunOptions::default(),
    );
    assert!(!r.completed);
    let f = only(&r, FindingKind::AssertionFailed);
    assert_eq!(f.lines(), vec![corpus_bug("assert_positive")], "{f}");
    assert_eq!(f.threads[0].threads, 2, "{f}");
    assert_eq!(f.threads[0].example.thread, [1, 0, 0], "{f}");
    assert_eq!(f.threads[0].state, "failed assert(in[i] >= 0)");
    assert!(
        f.why
            .contains("void assert_positive(const int *, int *, int)"),
        "{f}"
    );
    let line = corpus_bug("assert_positive");
    let message = |t: u32| {
        format!(
            "emu/tests/corpus/assert_positive.cu:{line}: void assert_positive(const int *, int *, int): block: [0,0,0], thread: [{t},0,0] Assertion `in[i] >= 0` failed.\n"
        )
    };
    assert_eq!(r.printf_output(), message(1) + &message(3));
}

#[test]
fn clocks_sleep_and_active_mask() {
    let mut emu = Emulator::new();
    let n = 70;
    let out = emu.alloc(n * 4, "out");
    let args = [KernelArg::Ptr(out), KernelArg::I32(n as i32)];
    let r = launch_corpus(
        &mut emu,
        "clock_sleep",
        &cfg(2, 48, 0),
        &args,
        &RunOptions::default(),
    );
    assert!(r.findings.is_empty() && r.completed, "{}", show(&r));
    assert_eq!(u32s(&emu, out, n), vec![3; n]);
}

fn heap_blocks_want(n: i64) -> Vec<i64> {
    (0..n)
        .map(|i| (0..1 + i % 17).map(|k| (i + k) * k).sum())
        .collect()
}

fn i64s(emu: &Emulator, p: DevicePtr, n: usize) -> Vec<i64> {
    let mut b = vec![0u8; n * 8];
    emu.read(p, &mut b).unwrap();
    b.chunks(8)
        .map(|c| i64::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

#[test]
fn device_malloc_and_free_are_clean_and_right() {
    let mut emu = Emulator::new();
    let n = 50;
    let out = emu.alloc(n * 8, "out");
    let args = [KernelArg::Ptr(out), KernelArg::I32(n as i32)];
    let r = launch_corpus(
        &mut emu,
        "heap_blocks",
        &cfg(2, 32, 0),
        &args,
        &RunOptions::default(),
    );
    assert!(r.findings.is_empty() && r.completed, "{}", show(&r));
    assert_eq!(i64s(&emu, out, n), heap_blocks_want(n as i64));
}

#[test]
fn device_malloc_returns_null_past_the_heap_limit() {
    let mut emu = Emulator::new();
    // The 64 threads ask for 4,400 bytes at once; the heap holds 2,000.
    emu.set_heap_limit(2_000);
    let n = 64;
    let out = emu.alloc(n * 8, "out");
    let args = [KernelArg::Ptr(out), KernelArg::I32(n as i32)];
    let r = launch_corpus(
        &mut emu,
        "heap_blocks",
        &cfg(1, 64, 0),
        &args,
        &RunOptions::default(),
    );
    assert!(r.findings.is_empty() && r.completed, "{}", show(&r));
    let got = i64s(&emu, out, n);
    let want = heap_blocks_want(n as i64);
    let failed = got.iter().filter(|&&v| v == -1).count();
    assert!(failed > 0 && failed < n, "{failed} of {n} failed");
    for i in 0..n {
        assert!(got[i] == -1 || got[i] == want[i], "thread {i}: {}", got[i]);
    }
}

#[test]
fn a_heap_block_overflow_names_the_block_and_its_malloc() {
    let mut emu = Emulator::new();
    let out = emu.alloc(8 * 4, "out");
    let args = [KernelArg::Ptr(out), KernelArg::I32(8)];
    let r = launch_corpus(
        &mut emu,
        "heap_overflow",
        &cfg(1, 8, 0),
        &args,
        &RunOptions::default(),
    );
    let f = only(
        &r,
        FindingKind::OutOfBounds {
            space: Space::Global,
        },
    );
    assert_eq!(f.lines(), vec![corpus_bug("heap_overflow")], "{f}");
    let text = f.to_string();
    assert!(
        text.contains("malloc@emu/tests/corpus/heap_overflow.cu:13["),
        "{text}"
    );
    assert!(text.contains("bytes past the end of malloc@"), "{text}");
    assert_eq!(f.count, 8, "one per thread: {text}");
}

#[test]
fn a_read_after_free_is_use_after_free_with_both_lines() {
    let mut emu = Emulator::new();
    let out = emu.alloc(4 * 4, "out");
    let args = [KernelArg::Ptr(out), KernelArg::I32(4)];
    let r = launch_corpus(
        &mut emu,
        "heap_use_after_free",
        &cfg(1, 4, 0),
        &args,
        &RunOptions::default(),
    );
    let f = only(&r, FindingKind::UseAfterFree);
    let bug = corpus_bug("heap_use_after_free");
    assert_eq!(f.lines(), vec![bug - 1, bug], "{f}");
    assert_eq!(f.accesses[0].op, AccessOp::Free, "{f}");
    assert_eq!(f.accesses[1].op, AccessOp::Read, "{f}");
    assert_eq!(
        u32s(&emu, out, 4),
        vec![0; 4],
        "reads of freed memory give 0"
    );
}

/// A race on a heap block that is freed later in the launch names the block as it was when the
/// threads raced, on one core and on two (where the race detector reports after the free ran).
#[test]
fn a_race_on_a_heap_block_freed_later_names_the_block_as_it_was() {
    for threads in [1, 2] {
        let mut emu = Emulator::new();
        let out = emu.alloc(2 * 4, "out");
        let r = launch_corpus(
            &mut emu,
            "heap_race_then_free",
            &cfg(2, 64, 0),
            &[KernelArg::Ptr(out)],
            &RunOptions {
                threads,
                ..RunOptions::default()
            },
        );
        let f = only(
            &r,
            FindingKind::Race {
                hazard: Hazard::WriteAfterWrite,
                space: Space::Global,
            },
        );
        let bug = corpus_bug("heap_race_then_free");
        assert_eq!(f.lines(), vec![bug], "{f}");
        let location = f.location.as_ref().unwrap();
        assert!(location.label.starts_with("malloc@"), "{f}");
        assert_eq!(location.note, None, "{threads} threads: {f}");
        assert_eq!(u32s(&emu, out, 2), vec![1, 1]);
    }
}

#[test]
fn a_second_free_is_a_double_free() {
    let mut emu = Emulator::new();
    let out = emu.alloc(8 * 4, "out");
    let args = [KernelArg::Ptr(out), KernelArg::I32(8)];
    let r = launch_corpus(
        &mut emu,
        "heap_double_free",
        &cfg(1, 8, 0),
        &args,
        &RunOptions::default(),
    );
    let f = only(&r, FindingKind::DoubleFree);
    let bug = corpus_bug("heap_double_free");
    assert!(f.lines().contains(&bug), "{f}");
    assert_eq!(f.count, 4, "the odd threads: {f}");
    assert_eq!(f.accesses.len(), 2, "{f}");
    assert!(r.completed);
}

#[test]
fn recursion_with_local_arrays_gives_the_right_values() {
    let mut emu = Emulator::new();
    let n = 40;
    let out = emu.alloc(n * 4, "out");
    let args = [KernelArg::Ptr(out), KernelArg::I32(n as i32)];
    let r = launch_corpus(
        &mut emu,
        "recursion_fib",
        &cfg(2, 32, 0),
        &args,
        &RunOptions::default(),
    );
    assert!(r.findings.is_empty() && r.completed, "{}", show(&r));
    fn fib(n: u32) -> u32 {
        if n < 2 { n } else { fib(n - 1) + fib(n - 2) }
    }
    let want: Vec<u32> = (0..n as u32).map(|i| fib(i % 16) + (i % 16) * 3).collect();
    assert_eq!(u32s(&emu, out, n), want);
}

#[test]
fn unbounded_recursion_is_a_stack_overflow_at_its_line() {
    let mut emu = Emulator::new();
    let out = emu.alloc(4 * 4, "out");
    let args = [KernelArg::Ptr(out), KernelArg::I32(4)];
    let r = launch_corpus(
        &mut emu,
        "recursion_unbounded",
        &cfg(1, 4, 0),
        &args,
        &RunOptions::default(),
    );
    assert!(!r.completed);
    let f = only(&r, FindingKind::StackOverflow);
    assert_eq!(f.lines(), vec![corpus_bug("recursion_unbounded")], "{f}");
    assert_eq!(f.threads[0].threads, 4, "{f}");
}

#[test]
fn ten_thousand_threads_in_one_cas_loop_finish_under_the_watchdog() {
    // ~400 M thread-instructions, eight times the old fixed budget, with progress all along.
    let mut emu = Emulator::new();
    let n = 10_240;
    let values = emu.alloc(n * 4, "values");
    put_u32(&mut emu, values, &(0..n as u32).collect::<Vec<_>>());
    let total = emu.alloc(4, "total");
    let args = [
        KernelArg::Ptr(values),
        KernelArg::Ptr(total),
        KernelArg::I32(n as i32),
    ];
    let opts = RunOptions {
        racecheck: false,
        ..RunOptions::default()
    };
    let r = launch_corpus(&mut emu, "cas_add_many", &cfg(40, 256, 0), &args, &opts);
    assert!(r.findings.is_empty() && r.completed, "{}", show(&r));
    assert_eq!(u32s(&emu, total, 1)[0], (n * (n - 1) / 2) as u32);
    assert!(
        r.thread_instructions > 100_000_000,
        "{}",
        r.thread_instructions
    );
}

#[test]
fn a_loop_that_only_changes_registers_is_slow_not_stuck() {
    let mut emu = Emulator::new();
    let (n, steps) = (64usize, 20_000u32);
    let out = emu.alloc(n * 4, "out");
    let args = [
        KernelArg::Ptr(out),
        KernelArg::I32(n as i32),
        KernelArg::I32(steps as i32),
    ];
    // A window far shorter than the loop: many windows pass with no store at all.
    let opts = RunOptions {
        watchdog_window: 10_000,
        ..RunOptions::default()
    };
    let r = launch_corpus(&mut emu, "busy_loop", &cfg(2, 32, 0), &args, &opts);
    assert!(r.findings.is_empty() && r.completed, "{}", show(&r));
    assert!(
        r.thread_instructions > 100 * 10_000,
        "{}",
        r.thread_instructions
    );
    let want: Vec<u32> = (0..n as u32)
        .map(|i| {
            let mut x = i + 1;
            for _ in 0..steps {
                x ^= x << 13;
                x ^= x >> 17;
                x ^= x << 5;
            }
            x
        })
        .collect();
    assert_eq!(u32s(&emu, out, n), want);
}

#[test]
fn syncwarp_with_lanes_outside_the_mask_is_reported_at_its_line() {
    let mut emu = Emulator::new();
    let out = emu.alloc(32 * 4, "out");
    let r = launch_corpus(
        &mut emu,
        "syncwarp_bad_mask",
        &cfg(1, 32, 0),
        &[KernelArg::Ptr(out)],
        &RunOptions::default(),
    );
    let f = only(
        &r,
        FindingKind::WarpSync {
            problem: WarpSyncProblem::LaneNotInMask,
        },
    );
    assert_eq!(f.lines(), vec![corpus_bug("syncwarp_bad_mask")], "{f}");
    assert_eq!(f.threads[0].threads, 16, "{f}");
    assert!(f.to_string().contains("__syncwarp(0x0000ffff)"), "{f}");
}

#[test]
fn a_full_mask_shuffle_that_half_the_warp_skips_never_completes() {
    let mut emu = Emulator::new();
    let input = emu.alloc(32 * 4, "in");
    let out = emu.alloc(32 * 4, "out");
    let r = launch_corpus(
        &mut emu,
        "shfl_lanes_missing",
        &cfg(1, 32, 0),
        &[KernelArg::Ptr(input), KernelArg::Ptr(out)],
        &RunOptions::default(),
    );
    assert!(!r.completed);
    let f = r
        .findings
        .iter()
        .find(|f| {
            f.kind
                == FindingKind::WarpSync {
                    problem: WarpSyncProblem::NeverArrive,
                }
        })
        .unwrap_or_else(|| panic!("{}", show(&r)));
    assert!(f.lines().contains(&corpus_bug("shfl_lanes_missing")), "{f}");
    let text = f.to_string();
    assert!(
        text.contains("16 threads wait in __shfl_down_sync(0xffffffff)"),
        "{text}"
    );
    assert!(
        text.contains("16 threads named in the mask wait at barrier 0"),
        "{text}"
    );
}

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
