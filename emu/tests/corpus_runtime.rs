//! Corpus tests of the device runtime: printf, assert, clocks, the device heap, recursion, the
//! watchdog and warp-sync masks.

// Test helpers panic with context on purpose; a failed unwrap is a failed test.
#![allow(clippy::unwrap_used)]

use ptx_emu::*;

mod corpus_support;
use corpus_support::*;

// ---------------------------------------------------------------------------------------------
// printf, assert, clocks, the device heap, recursion, the watchdog and warp-sync masks

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
    assert!(text.contains("past the end of malloc@"), "{text}");
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
        text.contains("16 threads named in the mask wait at a __syncthreads()"),
        "{text}"
    );
}
