//! The emulator's corpus and ch4's kernels through `harness::check`, as a learner's kernel runs.
//!
//! Fixed kernels: the emulator must match the CPU with no findings; where there is a GPU
//! (or `RACETRACK_BACKEND=cuda` demands one) the GPU must match the CPU too, and the two
//! backends each other: integers exactly, floats within the algorithm's rounding bound.
//! Broken kernels run on the emulator only, and must be caught at their `// BUG:` line; the ones
//! that can hang a GPU (barrier divergence, spinning forever) never go near one.

use harness::check::front::CompileFlags;
use harness::check::{HostArg, HostData, HostElement, Kernel, Outcome, Program, Scalar};
use harness::kernel::line_of_marker;
use harness::ptx::workspace_root;
use harness::rand::Rng;
use harness::testing::{require_cuda_headers, require_nvrtc};
use harness::verify::{bounds, compare_within};
use harness::{
    BackendChoice, Device, Dim3, EmuSettings, FindingKind, LaunchShape, Schedule, cli::seeded_rng,
};
use ptx_emu::{Space, WarpSyncProblem};

/// Compiles `path` (relative to the workspace root, as reports name it), with NVRTC fetched as
/// `check` fetches it when it is not installed; a failure to get it fails the test.
fn kernel(path: &str, entry: &str) -> Kernel {
    kernel_with(path, entry, &CompileFlags::default())
}

fn kernel_with(path: &str, entry: &str, flags: &CompileFlags) -> Kernel {
    require_nvrtc();
    let source = std::fs::read_to_string(workspace_root().join(path))
        .unwrap_or_else(|e| panic!("{path}: {e}"));
    let program = Program::new(path, source, flags);
    program.kernel(entry).unwrap_or_else(|e| panic!("{e}"))
}

fn bug_line(path: &str) -> u32 {
    let source = std::fs::read_to_string(workspace_root().join(path))
        .unwrap_or_else(|e| panic!("{path}: {e}"));
    line_of_marker(&source, "// BUG:").unwrap_or_else(|| panic!("{path} has no // BUG: line"))
}

fn on_emu(kernel: &Kernel, shape: LaunchShape, args: &[HostArg], schedule: Schedule) -> Outcome {
    let mut device = Device::open(BackendChoice::Emu).unwrap_or_else(|e| panic!("{e}"));
    device.set_emu_settings(EmuSettings {
        schedule,
        ..EmuSettings::default()
    });
    kernel
        .run(&mut device, shape, args)
        .unwrap_or_else(|e| panic!("{}: {e}", kernel.source().path))
}

/// The GPU, when there is one; required when `RACETRACK_BACKEND=cuda`.
fn gpu() -> Option<Device> {
    let required = matches!(BackendChoice::from_env(), Ok(BackendChoice::Cuda));
    match Device::open(BackendChoice::Cuda) {
        Ok(device) => Some(device),
        Err(error) if required => panic!("RACETRACK_BACKEND=cuda, but {error}"),
        Err(error) => {
            eprintln!("cuda half skipped: {error}");
            None
        }
    }
}

fn findings_text(outcome: &Outcome) -> String {
    outcome.findings.iter().map(|f| format!("{f}\n")).collect()
}

fn as_f64(data: &HostData) -> Vec<f64> {
    match data {
        HostData::U8(v) => v.iter().map(|&x| f64::from(x)).collect(),
        HostData::I8(v) => v.iter().map(|&x| f64::from(x)).collect(),
        HostData::U16(v) => v.iter().map(|&x| f64::from(x)).collect(),
        HostData::I16(v) => v.iter().map(|&x| f64::from(x)).collect(),
        HostData::F16(v) => v.iter().map(|&x| x.to_f64()).collect(),
        HostData::BF16(v) => v.iter().map(|&x| x.to_f64()).collect(),
        HostData::I32(v) => v.iter().map(|&x| f64::from(x)).collect(),
        HostData::U32(v) => v.iter().map(|&x| f64::from(x)).collect(),
        HostData::U64(v) => v.iter().map(|&x| x as f64).collect(),
        HostData::I64(v) => v.iter().map(|&x| x as f64).collect(),
        HostData::F32(v) => v.iter().map(|&x| f64::from(x)).collect(),
        HostData::F64(v) => v.clone(),
    }
}

fn head(data: &HostData) -> String {
    let values = as_f64(data);
    let shown: Vec<String> = values.iter().take(6).map(ToString::to_string).collect();
    let more = if values.len() > 6 { ", …" } else { "" };
    format!(
        "[{}{more}] (sum {})",
        shown.join(", "),
        values.iter().sum::<f64>()
    )
}

/// What one output buffer must hold.
enum Want {
    Exact(HostData),
    /// An f64 reference and, per element, the largest rounding error the algorithm allows.
    Within {
        want: Vec<f64>,
        bound: Vec<f64>,
    },
}

struct Fixed {
    path: &'static str,
    entry: &'static str,
    shape: LaunchShape,
    args: Vec<HostArg>,
    wants: Vec<(usize, Want)>,
    schedules: Vec<Schedule>,
}

fn output<'a>(outcome: &'a Outcome, index: usize, path: &str) -> &'a HostData {
    outcome
        .outputs
        .get(index)
        .and_then(Option::as_ref)
        .unwrap_or_else(|| panic!("{path}: argument {index} is no buffer"))
}

fn assert_wants(backend: &str, case: &Fixed, outcome: &Outcome) {
    for (index, want) in &case.wants {
        let got = output(outcome, *index, case.path);
        match want {
            Want::Exact(want) => assert!(
                got == want,
                "{} on {backend}, argument {index}: got {} want {}",
                case.path,
                head(got),
                head(want)
            ),
            Want::Within { want, bound } => {
                let comparison = compare_within(&as_f64(got), want, |i| bound[i]);
                assert!(
                    comparison.is_match(),
                    "{} on {backend}, argument {index}: {comparison}",
                    case.path
                );
            }
        }
    }
}

/// Emulator against the CPU with no findings; then, with a GPU, the GPU against the CPU and
/// against the emulator.
fn run_fixed(case: Fixed) {
    run_fixed_with(case, &CompileFlags::default());
}

fn run_fixed_with(case: Fixed, flags: &CompileFlags) {
    let kernel = kernel_with(case.path, case.entry, flags);
    let mut emu = None;
    for &schedule in &case.schedules {
        let outcome = on_emu(&kernel, case.shape, &case.args, schedule);
        assert!(
            outcome.findings.is_empty(),
            "{} ({schedule:?}):\n{}",
            case.path,
            findings_text(&outcome)
        );
        assert_wants(&format!("emu ({schedule:?})"), &case, &outcome);
        emu.get_or_insert(outcome);
    }
    let emu = emu.unwrap_or_else(|| panic!("{}: no schedule to run", case.path));
    let Some(mut device) = gpu() else {
        return;
    };
    let cuda = kernel
        .run(&mut device, case.shape, &case.args)
        .unwrap_or_else(|e| panic!("{}: {e}", case.path));
    assert_wants("cuda", &case, &cuda);
    for (index, want) in &case.wants {
        let (on_cuda, on_emu) = (
            output(&cuda, *index, case.path),
            output(&emu, *index, case.path),
        );
        eprintln!(
            "{} argument {index}: emu {} | cuda {}",
            case.path,
            head(on_emu),
            head(on_cuda)
        );
        match want {
            Want::Exact(_) => assert!(on_cuda == on_emu, "{}: cuda and emu differ", case.path),
            Want::Within { bound, .. } => {
                let comparison =
                    compare_within(&as_f64(on_cuda), &as_f64(on_emu), |i| 2.0 * bound[i]);
                assert!(
                    comparison.is_match(),
                    "{}: cuda against emu: {comparison}",
                    case.path
                );
            }
        }
    }
}

fn buffer<T: HostElement>(label: &str, values: Vec<T>) -> HostArg {
    HostArg::buffer(label, values)
}

fn random_f32(seed: u64, len: usize) -> Vec<f32> {
    let mut rng = seeded_rng(seed);
    (0..len).map(|_| rng.random::<f32>() * 2.0 - 1.0).collect()
}

fn i32_arg(label: &str, value: usize) -> HostArg {
    HostArg::scalar(label, Scalar::I32(i32::try_from(value).unwrap_or(i32::MAX)))
}

fn u32_arg(label: &str, value: usize) -> HostArg {
    HostArg::scalar(label, Scalar::U32(u32::try_from(value).unwrap_or(u32::MAX)))
}

fn grid_2d(x: usize, y: usize, block: u32) -> LaunchShape {
    let blocks = |n: usize| u32::try_from(n.div_ceil(block as usize)).unwrap_or(u32::MAX);
    LaunchShape {
        grid: Dim3::xy(blocks(x), blocks(y)),
        block: Dim3::xy(block, block),
        dynamic_shared_bytes: 0,
    }
}

const EVERY_SCHEDULE: [Schedule; 3] = [
    Schedule::Hardware,
    Schedule::Random { seed: 5 },
    Schedule::Adversarial { seed: 5 },
];

// ---------------------------------------------------------------------------------------------
// Fixed kernels

#[test]
fn tree_reduction_matches_the_cpu_within_its_bound() {
    let (n, block) = (1000usize, 128u32);
    let data = random_f32(11, n);
    let chunks: Vec<&[f32]> = data.chunks(block as usize).collect();
    let want = chunks
        .iter()
        .map(|c| c.iter().map(|&x| f64::from(x)).sum())
        .collect();
    let depth = bounds::tree_depth(u64::from(block));
    let bound = chunks
        .iter()
        .map(|c| bounds::sum_f32(depth, c.iter().map(|x| f64::from(x.abs())).sum()))
        .collect();
    run_fixed(Fixed {
        path: "emu/tests/corpus/tree_reduce.cu",
        entry: "tree_reduce",
        shape: LaunchShape::linear(chunks.len() as u32, block).with_dynamic_shared(block * 4),
        args: vec![
            buffer("in", data.clone()),
            buffer("out", vec![0f32; chunks.len()]),
            i32_arg("n", n),
        ],
        wants: vec![(1, Want::Within { want, bound })],
        schedules: EVERY_SCHEDULE.to_vec(),
    });
}

#[test]
fn double_buffered_hillis_steele_scan_is_exact() {
    let n = 200usize;
    let mut rng = seeded_rng(12);
    let data: Vec<i32> = (0..n).map(|_| rng.random_range(-1000..1000)).collect();
    let want: Vec<i32> = data
        .iter()
        .scan(0, |acc, &x| {
            *acc += x;
            Some(*acc)
        })
        .collect();
    run_fixed(Fixed {
        path: "emu/tests/corpus/scan_double_buffer.cu",
        entry: "scan_double_buffer",
        shape: LaunchShape::linear(1, n as u32).with_dynamic_shared(2 * n as u32 * 4),
        args: vec![
            buffer("in", data),
            buffer("out", vec![0i32; n]),
            i32_arg("n", n),
        ],
        wants: vec![(1, Want::Exact(HostData::I32(want)))],
        schedules: EVERY_SCHEDULE.to_vec(),
    });
}

#[test]
fn blelloch_exclusive_scan_matches_the_cpu_within_its_bound() {
    let n = 256usize;
    let data = random_f32(13, n);
    let (mut want, mut bound) = (Vec::with_capacity(n), Vec::with_capacity(n));
    let (mut sum, mut abs_sum) = (0f64, 0f64);
    // Up-sweep and down-sweep each add along a path of at most log2(n) additions.
    let depth = 2 * bounds::tree_depth(n as u64);
    for &x in &data {
        want.push(sum);
        bound.push(bounds::sum_f32(depth, abs_sum));
        sum += f64::from(x);
        abs_sum += f64::from(x.abs());
    }
    run_fixed(Fixed {
        path: "emu/tests/corpus/blelloch.cu",
        entry: "blelloch",
        shape: LaunchShape::linear(1, n as u32 / 2).with_dynamic_shared(n as u32 * 4),
        args: vec![
            buffer("in", data),
            buffer("out", vec![0f32; n]),
            i32_arg("n", n),
        ],
        wants: vec![(1, Want::Within { want, bound })],
        schedules: vec![Schedule::Hardware, Schedule::Adversarial { seed: 1 }],
    });
}

#[test]
fn tiled_matmul_matches_the_cpu_within_its_bound() {
    let n = 40usize;
    let (a, b) = (random_f32(14, n * n), random_f32(15, n * n));
    let (mut want, mut bound) = (vec![0f64; n * n], vec![0f64; n * n]);
    for row in 0..n {
        for col in 0..n {
            let terms = (0..n).map(|k| f64::from(a[row * n + k]) * f64::from(b[k * n + col]));
            want[row * n + col] = terms.clone().sum();
            // n serial additions, each product rounded once (or fused): depth n + 1.
            bound[row * n + col] = bounds::sum_f32(n as u64 + 1, terms.map(f64::abs).sum());
        }
    }
    run_fixed(Fixed {
        path: "emu/tests/corpus/matmul_tiled.cu",
        entry: "matmul_tiled",
        shape: grid_2d(n, n, 16),
        args: vec![
            buffer("A", a),
            buffer("B", b),
            buffer("C", vec![0f32; n * n]),
            i32_arg("N", n),
        ],
        wants: vec![(2, Want::Within { want, bound })],
        schedules: vec![Schedule::Hardware],
    });
}

#[test]
fn life_step_matches_the_cpu() {
    let (w, h) = (37usize, 21usize);
    let mut rng = seeded_rng(16);
    let cells: Vec<u8> = (0..w * h)
        .map(|_| u8::from(rng.random_bool(0.35)))
        .collect();
    let mut want = vec![0u8; w * h];
    for y in 0..h {
        for x in 0..w {
            let mut alive = 0;
            for dy in [h - 1, 0, 1] {
                for dx in [w - 1, 0, 1] {
                    if (dx, dy) != (0, 0) {
                        alive += cells[((y + dy) % h) * w + (x + dx) % w];
                    }
                }
            }
            want[y * w + x] = u8::from(alive == 3 || (cells[y * w + x] == 1 && alive == 2));
        }
    }
    run_fixed(Fixed {
        path: "emu/tests/corpus/life_step.cu",
        entry: "life_step",
        shape: grid_2d(w, h, 16),
        args: vec![
            buffer("in", cells),
            buffer("out", vec![0u8; w * h]),
            i32_arg("width", w),
            i32_arg("height", h),
        ],
        wants: vec![(1, Want::Exact(HostData::U8(want)))],
        schedules: vec![Schedule::Hardware],
    });
}

#[test]
fn warp_shuffle_sum_matches_the_cpu_within_its_bound() {
    let (n, blocks, threads) = (5000usize, 3usize, 256usize);
    let data = random_f32(17, n);
    let mut want = vec![0f64; blocks];
    let mut abs_sum = vec![0f64; blocks];
    for (i, &x) in data.iter().enumerate() {
        want[(i / threads) % blocks] += f64::from(x);
        abs_sum[(i / threads) % blocks] += f64::from(x.abs());
    }
    // A serial grid-stride loop, then two 32-lane shuffle trees (5 levels each).
    let depth = n.div_ceil(blocks * threads) as u64 + 10;
    let bound = abs_sum.iter().map(|&s| bounds::sum_f32(depth, s)).collect();
    run_fixed(Fixed {
        path: "emu/tests/corpus/warp_shuffle_sum.cu",
        entry: "warp_shuffle_sum",
        shape: LaunchShape::linear(blocks as u32, threads as u32),
        args: vec![
            buffer("in", data),
            buffer("out", vec![0f32; blocks]),
            i32_arg("n", n),
        ],
        wants: vec![(1, Want::Within { want, bound })],
        schedules: EVERY_SCHEDULE.to_vec(),
    });
}

#[test]
fn mutex_increment_counts_one_per_block() {
    run_fixed(Fixed {
        path: "emu/tests/corpus/mutex_increment.cu",
        entry: "mutex_increment",
        shape: LaunchShape::linear(12, 64),
        args: vec![buffer("mutex", vec![0i32]), buffer("x", vec![0i32])],
        wants: vec![
            (0, Want::Exact(HostData::I32(vec![0]))),
            (1, Want::Exact(HostData::I32(vec![12]))),
        ],
        schedules: EVERY_SCHEDULE.to_vec(),
    });
}

/// Integers as doubles: every order of the additions gives the exact sum.
fn cas_add_double_inputs(n: usize) -> (Vec<f64>, f64) {
    let x: Vec<f64> = (0..n).map(|i| (i % 23) as f64).collect();
    let sum = x.iter().sum();
    (x, sum)
}

#[test]
fn cas_loop_add_for_double_sums_exactly() {
    let n = 1000;
    let (x, sum) = cas_add_double_inputs(n);
    run_fixed(Fixed {
        path: "emu/tests/corpus/cas_add_double.cu",
        entry: "cas_add_double",
        shape: LaunchShape::linear(8, 128),
        args: vec![buffer("x", x), buffer("sum", vec![0f64]), i32_arg("n", n)],
        wants: vec![(1, Want::Exact(HostData::F64(vec![sum])))],
        schedules: EVERY_SCHEDULE.to_vec(),
    });
}

#[test]
fn cas_loop_with_break_counts_every_thread() {
    run_fixed(Fixed {
        path: "emu/tests/corpus/cas_increment_break.cu",
        entry: "cas_increment_break",
        shape: LaunchShape::linear(6, 96),
        args: vec![buffer("count", vec![0i32])],
        wants: vec![(0, Want::Exact(HostData::I32(vec![6 * 96])))],
        schedules: EVERY_SCHEDULE.to_vec(),
    });
}

#[test]
fn dot_with_mutex_matches_the_cpu_within_its_bound() {
    let (n, blocks, threads) = (3000usize, 5u32, 256u32);
    let (a, b) = (random_f32(18, n), random_f32(19, n));
    let products = a.iter().zip(&b).map(|(&x, &y)| f64::from(x) * f64::from(y));
    let want = products.clone().sum();
    // The product, a serial grid-stride loop, the block tree, then the blocks one by one.
    let depth = 1
        + n.div_ceil((blocks * threads) as usize) as u64
        + bounds::tree_depth(threads.into())
        + u64::from(blocks);
    let bound = bounds::sum_f32(depth, products.map(f64::abs).sum());
    run_fixed(Fixed {
        path: "emu/tests/corpus/dot_mutex.cu",
        entry: "dot_mutex",
        shape: LaunchShape::linear(blocks, threads),
        args: vec![
            buffer("a", a),
            buffer("b", b),
            buffer("c", vec![0f32]),
            i32_arg("n", n),
            buffer("mutex", vec![0i32]),
        ],
        wants: vec![(
            2,
            Want::Within {
                want: vec![want],
                bound: vec![bound],
            },
        )],
        schedules: vec![Schedule::Hardware, Schedule::Random { seed: 3 }],
    });
}

#[test]
fn flag_wait_hands_a_value_between_blocks() {
    run_fixed(Fixed {
        path: "emu/tests/corpus/flag_wait.cu",
        entry: "flag_wait",
        shape: LaunchShape::linear(2, 32),
        args: vec![
            buffer("flag", vec![0i32]),
            buffer("data", vec![0i32]),
            buffer("out", vec![0i32]),
        ],
        wants: vec![
            (1, Want::Exact(HostData::I32(vec![42]))),
            (2, Want::Exact(HostData::I32(vec![43]))),
        ],
        schedules: EVERY_SCHEDULE.to_vec(),
    });
}

#[test]
fn every_block_waits_for_the_last_blocks_flag() {
    let blocks = 8;
    run_fixed(Fixed {
        path: "emu/tests/corpus/flag_wait_last.cu",
        entry: "flag_wait_last",
        shape: LaunchShape::linear(blocks, 32),
        args: vec![buffer("flag", vec![0i32]), buffer("arrived", vec![0i32])],
        wants: vec![
            (0, Want::Exact(HostData::I32(vec![1]))),
            (1, Want::Exact(HostData::I32(vec![blocks as i32 - 1]))),
        ],
        schedules: EVERY_SCHEDULE.to_vec(),
    });
}

#[test]
fn calls_and_local_memory_are_exact() {
    let (n, pick) = (40usize, 3i32);
    let input: Vec<i32> = (0..n as i32).map(|i| i * 13 - 200).collect();
    let out: Vec<f32> = input
        .iter()
        .map(|&x| {
            let scratch: Vec<i32> = (0..8)
                .map(|k| (x + k) * if k & 1 == 1 { -1 } else { 1 })
                .collect();
            let acc: i32 = (0..8).map(|k| scratch[((k + pick) & 7) as usize]).sum();
            (acc as f32).clamp(-100.0, 100.0) * 1.5
        })
        .collect();
    let doubled: Vec<f64> = input.iter().map(|&x| f64::from(x) * 2.0).collect();
    run_fixed(Fixed {
        path: "emu/tests/corpus/calls_and_local.cu",
        entry: "calls_and_local",
        shape: LaunchShape::linear(2, 32),
        args: vec![
            buffer("in", input),
            buffer("out", vec![0f32; n]),
            buffer("dout", vec![0f64; n]),
            i32_arg("n", n),
            HostArg::scalar("pick", Scalar::I32(pick)),
        ],
        wants: vec![
            (1, Want::Exact(HostData::F32(out))),
            (2, Want::Exact(HostData::F64(doubled))),
        ],
        schedules: vec![Schedule::Hardware],
    });
}

#[test]
fn intra_warp_mutex_makes_progress_on_the_emulator() {
    // Emulator only: threads of one warp taking turns at a lock needs independent thread
    // scheduling, and on a GPU without it (before Volta) this spins forever.
    let kernel = kernel("emu/tests/corpus/mutex_all_threads.cu", "mutex_all_threads");
    for schedule in EVERY_SCHEDULE {
        let args = [buffer("mutex", vec![0i32]), buffer("x", vec![0i32])];
        let outcome = on_emu(&kernel, LaunchShape::linear(3, 48), &args, schedule);
        assert!(
            outcome.findings.is_empty(),
            "{schedule:?}\n{}",
            findings_text(&outcome)
        );
        assert_eq!(outcome.values::<i32>(1), Some(&[144][..]), "{schedule:?}");
    }
}

/// The kernel's lines, sorted. A GPU's printf goes to the process's standard output, which the
/// capture shares with the test harness's own reports from other threads: keep only the lines
/// that start with the kernel's label.
fn sorted_lines<'a>(text: &'a str, label: &str) -> Vec<&'a str> {
    let mut lines: Vec<&str> = text
        .lines()
        .filter(|line| line.starts_with(label))
        .collect();
    lines.sort_unstable();
    lines
}

#[test]
fn printf_prints_the_same_lines_on_both_backends() {
    let path = "emu/tests/corpus/printf_formats.cu";
    let kernel = kernel(path, "printf_formats");
    let args = [
        buffer("values", vec![1.5f32, -2.25, 1234.5678, 0.0, 3e-3, 100.0]),
        buffer("label", b"val\0".to_vec()),
        i32_arg("n", 6),
    ];
    let shape = LaunchShape::linear(2, 4);
    let emu = on_emu(&kernel, shape, &args, Schedule::Hardware);
    assert!(emu.findings.is_empty(), "{}", findings_text(&emu));
    assert_eq!(emu.printf.lines().count(), 6, "{}", emu.printf);
    assert!(
        emu.printf
            .starts_with("val[000] =    1.500 | 1.500000e-05 | 1.5e+06 | -2 0 0 0 0 0 a |"),
        "{}",
        emu.printf
    );
    let Some(mut device) = gpu() else {
        return;
    };
    let cuda = kernel
        .run(&mut device, shape, &args)
        .unwrap_or_else(|e| panic!("{path}: {e}"));
    eprintln!("{path} on cuda:\n{}", cuda.printf);
    // A GPU prints in no fixed order: the same lines, sorted.
    let emu_lines = sorted_lines(&emu.printf, "val[");
    assert_eq!(emu_lines.len(), 6, "{}", emu.printf);
    assert_eq!(sorted_lines(&cuda.printf, "val["), emu_lines);
}

#[test]
fn clocks_sleep_and_active_mask_agree_on_both_backends() {
    let n = 70;
    run_fixed(Fixed {
        path: "emu/tests/corpus/clock_sleep.cu",
        entry: "clock_sleep",
        shape: LaunchShape::linear(2, 48),
        args: vec![buffer("out", vec![0i32; n]), i32_arg("n", n)],
        wants: vec![(0, Want::Exact(HostData::I32(vec![3; n])))],
        schedules: EVERY_SCHEDULE.to_vec(),
    });
}

#[test]
fn device_malloc_and_free_are_exact_on_both_backends() {
    let n = 100i64;
    let want: Vec<i64> = (0..n)
        .map(|i| (0..1 + i % 17).map(|k| (i + k) * k).sum())
        .collect();
    run_fixed(Fixed {
        path: "emu/tests/corpus/heap_blocks.cu",
        entry: "heap_blocks",
        shape: LaunchShape::linear(4, 32),
        args: vec![
            buffer("out", vec![0i64; n as usize]),
            i32_arg("n", n as usize),
        ],
        wants: vec![(0, Want::Exact(HostData::I64(want)))],
        schedules: EVERY_SCHEDULE.to_vec(),
    });
}

#[test]
fn recursion_is_exact_on_both_backends() {
    fn fib(n: i32) -> i32 {
        if n < 2 { n } else { fib(n - 1) + fib(n - 2) }
    }
    let n = 48;
    let want: Vec<i32> = (0..n as i32).map(|i| fib(i % 16) + (i % 16) * 3).collect();
    run_fixed(Fixed {
        path: "emu/tests/corpus/recursion_fib.cu",
        entry: "recursion_fib",
        shape: LaunchShape::linear(2, 32),
        args: vec![buffer("out", vec![0i32; n]), i32_arg("n", n)],
        wants: vec![(0, Want::Exact(HostData::I32(want)))],
        schedules: vec![Schedule::Hardware],
    });
}

#[test]
fn a_cas_loop_on_one_word_finishes_on_both_backends() {
    let n = 2048;
    let values: Vec<i32> = (0..n as i32).collect();
    let total = values.iter().sum::<i32>();
    run_fixed(Fixed {
        path: "emu/tests/corpus/cas_add_many.cu",
        entry: "cas_add_many",
        shape: LaunchShape::linear(8, 256),
        args: vec![
            buffer("values", values),
            buffer("total", vec![0i32]),
            i32_arg("n", n),
        ],
        wants: vec![(1, Want::Exact(HostData::I32(vec![total])))],
        schedules: vec![Schedule::Hardware],
    });
}

#[test]
fn a_long_register_loop_finishes_on_both_backends() {
    let (n, steps) = (64usize, 20_000);
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
    run_fixed(Fixed {
        path: "emu/tests/corpus/busy_loop.cu",
        entry: "busy_loop",
        shape: LaunchShape::linear(2, 32),
        args: vec![
            buffer("out", vec![0u32; n]),
            i32_arg("n", n),
            i32_arg("steps", steps),
        ],
        wants: vec![(0, Want::Exact(HostData::U32(want)))],
        schedules: vec![Schedule::Hardware],
    });
}

#[test]
fn half_atomics_sum_exactly_on_both_backends() {
    // 256 threads: 64 per pair word, 32 per half (see the kernel's header).
    let f16_64_32 = (0x5000u32 << 16) | 0x5400;
    let bf16_64_128 = (0x4300u32 << 16) | 0x4280;
    run_fixed(Fixed {
        path: "emu/tests/corpus/half_atomics.cu",
        entry: "half_atomics",
        shape: LaunchShape::linear(2, 128),
        args: vec![
            buffer("pairs", vec![0u32; 4]),
            buffer("bf_pairs", vec![0u32; 4]),
            buffer("halves", vec![0u16; 8]),
        ],
        wants: vec![
            (0, Want::Exact(HostData::U32(vec![f16_64_32; 4]))),
            (1, Want::Exact(HostData::U32(vec![bf16_64_128; 4]))),
            (2, Want::Exact(HostData::U16(vec![0x4800; 8]))),
        ],
        schedules: EVERY_SCHEDULE.to_vec(),
    });
}

fn text(len: usize, seed: u64) -> Vec<u8> {
    let mut rng = seeded_rng(seed);
    // Mostly letters, some bytes >= 128 so the kernels' skip path runs.
    (0..len)
        .map(|_| {
            if rng.random_bool(0.1) {
                rng.random_range(128..=255)
            } else {
                rng.random_range(b'a'..=b'z')
            }
        })
        .collect()
}

fn cpu_histogram(text: &[u8]) -> Vec<u32> {
    let mut bins = vec![0u32; 128];
    for &byte in text.iter().filter(|&&byte| byte < 128) {
        bins[usize::from(byte)] += 1;
    }
    bins
}

/// A kernel that writes every element of its output before anything reads it runs clean on a
/// buffer nobody initialized (`=uninit`), on the emulator with initcheck on and on a GPU.
#[test]
fn a_scatter_into_an_uninitialized_output_matches_the_cpu() {
    let n = 1000usize;
    let x: Vec<f32> = (0..n).map(|i| i as f32).collect();
    // Multiplying by an odd constant modulo a power of two permutes 0..1024; keep what is < n.
    let index: Vec<i32> = (0..1024usize)
        .map(|i| (i * 613) % 1024)
        .filter(|&j| j < n)
        .map(|j| j as i32)
        .collect();
    let mut want = vec![0f32; n];
    for (i, &j) in index.iter().enumerate() {
        want[j as usize] = x[i];
    }
    run_fixed(Fixed {
        path: "emu/tests/corpus/scatter.cu",
        entry: "scatter",
        shape: LaunchShape::linear(n.div_ceil(128) as u32, 128),
        args: vec![
            buffer("x", x),
            buffer("index", index),
            HostArg::uninit("out", HostData::F32(vec![0.0; n])),
            i32_arg("n", n),
        ],
        wants: vec![(2, Want::Exact(HostData::F32(want)))],
        schedules: EVERY_SCHEDULE.to_vec(),
    });
}

#[test]
fn ch4_atomic_increment_counts_every_thread() {
    run_fixed(Fixed {
        path: "kernels/ch4_atomics/02_atomic_increment.cu",
        entry: "atomic_increment",
        shape: LaunchShape::linear(10, 16),
        args: vec![buffer("x", vec![0i32])],
        wants: vec![(0, Want::Exact(HostData::I32(vec![160])))],
        schedules: vec![Schedule::Hardware],
    });
}

#[test]
fn ch4_fixed_histograms_count_like_the_cpu() {
    let text = text(3000, 20);
    let want = HostData::U32(cpu_histogram(&text));
    for (path, entry) in [
        (
            "kernels/ch4_atomics/03_histogram_global_atomics.cu",
            "histogram_global_atomics",
        ),
        (
            "kernels/ch4_atomics/05_histogram_shared.cu",
            "histogram_shared",
        ),
    ] {
        run_fixed(Fixed {
            path,
            entry,
            shape: LaunchShape::linear(3, 100),
            args: vec![
                buffer("text", text.clone()),
                u32_arg("n", text.len()),
                buffer("histo", vec![0u32; 128]),
            ],
            wants: vec![(2, Want::Exact(want.clone()))],
            schedules: vec![Schedule::Hardware],
        });
    }
    let values: Vec<u32> = text.iter().map(|&c| u32::from(c)).collect();
    run_fixed(Fixed {
        path: "kernels/ch4_atomics/08_histogram_any_bins.cu",
        entry: "histogram_any_bins",
        shape: LaunchShape::linear(4, 64).with_dynamic_shared(128 * 4),
        args: vec![
            buffer("values", values),
            u32_arg("n", text.len()),
            buffer("histo", vec![0u32; 128]),
            u32_arg("bins", 128),
        ],
        wants: vec![(2, Want::Exact(want))],
        schedules: vec![Schedule::Hardware],
    });
}

// ---------------------------------------------------------------------------------------------
// Broken kernels: the emulator only

/// Runs a broken kernel on the emulator and returns the findings that name its `// BUG:` line.
fn caught(path: &str, entry: &str, shape: LaunchShape, args: &[HostArg]) -> (u32, Outcome) {
    let kernel = kernel(path, entry);
    (
        bug_line(path),
        on_emu(&kernel, shape, args, Schedule::Hardware),
    )
}

fn assert_caught(path: &str, line: u32, outcome: &Outcome, kind: impl Fn(FindingKind) -> bool) {
    assert!(
        outcome
            .findings
            .iter()
            .any(|f| kind(f.kind) && f.lines().contains(&line)),
        "{path}: no such finding at line {line}:\n{}",
        findings_text(outcome)
    );
}

fn is_race(kind: FindingKind) -> bool {
    matches!(kind, FindingKind::Race { .. })
}

#[test]
fn tree_reduction_without_barrier_is_a_shared_race() {
    let path = "emu/tests/corpus/tree_reduce_no_sync.cu";
    let args = [
        buffer("in", random_f32(21, 512)),
        buffer("out", vec![0f32; 4]),
        i32_arg("n", 512),
    ];
    let (line, outcome) = caught(
        path,
        "tree_reduce_no_sync",
        LaunchShape::linear(4, 128).with_dynamic_shared(512),
        &args,
    );
    assert_caught(path, line, &outcome, |k| {
        matches!(
            k,
            FindingKind::Race {
                space: Space::Shared,
                ..
            }
        )
    });
}

#[test]
fn single_buffer_scan_is_a_race() {
    let path = "emu/tests/corpus/scan_single_buffer.cu";
    let args = [
        buffer("in", vec![1i32; 128]),
        buffer("out", vec![0i32; 128]),
        i32_arg("n", 128),
    ];
    let (line, outcome) = caught(
        path,
        "scan_single_buffer",
        LaunchShape::linear(1, 128).with_dynamic_shared(512),
        &args,
    );
    assert_caught(path, line, &outcome, is_race);
}

#[test]
fn tiled_matmul_without_second_barrier_is_a_race() {
    let path = "emu/tests/corpus/matmul_tiled_no_second_sync.cu";
    let n = 40;
    let args = [
        buffer("A", random_f32(22, n * n)),
        buffer("B", random_f32(23, n * n)),
        buffer("C", vec![0f32; n * n]),
        i32_arg("N", n),
    ];
    let (line, outcome) = caught(
        path,
        "matmul_tiled_no_second_sync",
        grid_2d(n, n, 16),
        &args,
    );
    assert_caught(path, line, &outcome, is_race);
}

#[test]
fn a_cas_seed_that_is_also_stored_is_a_race() {
    let path = "emu/tests/corpus/cas_seed_also_stored.cu";
    let n = 200;
    let (x, _) = cas_add_double_inputs(n);
    let (line, outcome) = caught(
        path,
        "cas_seed_also_stored",
        LaunchShape::linear(4, 64),
        &[
            buffer("x", x),
            buffer("sum", vec![0f64]),
            buffer("seen", vec![0f64; n]),
            i32_arg("n", n),
        ],
    );
    assert_caught(path, line, &outcome, is_race);
}

#[test]
fn one_past_the_end_is_out_of_bounds() {
    let path = "emu/tests/corpus/one_past_end.cu";
    let n = 100;
    let args = [
        buffer("in", (0..n as i32).collect::<Vec<_>>()),
        buffer("out", vec![0i32; n + 1]),
        i32_arg("n", n),
    ];
    let (line, outcome) = caught(path, "one_past_end", LaunchShape::linear(2, 64), &args);
    assert_caught(path, line, &outcome, |k| {
        matches!(k, FindingKind::OutOfBounds { .. })
    });
    let text = findings_text(&outcome);
    assert!(text.contains("in[100]"), "{text}");
}

#[test]
fn accumulating_into_an_uninitialized_output_is_an_uninitialized_read() {
    let path = "emu/tests/corpus/accumulate_into_output.cu";
    let n = 100;
    let args = [
        buffer("x", random_f32(22, n)),
        HostArg::uninit("out", HostData::F32(vec![0.0; n])),
        i32_arg("n", n),
    ];
    let (line, outcome) = caught(
        path,
        "accumulate_into_output",
        LaunchShape::linear(2, 64),
        &args,
    );
    assert_caught(path, line, &outcome, |k| {
        k == FindingKind::UninitializedRead {
            space: Space::Global,
        }
    });
    let text = findings_text(&outcome);
    assert!(
        text.contains("out[0]") && text.contains("seen 100 times"),
        "{text}"
    );
    // Zeroed first, as a fixed host would do, the same kernel is clean.
    let zeroed = [
        buffer("x", random_f32(22, n)),
        buffer("out", vec![0f32; n]),
        i32_arg("n", n),
    ];
    let (_, clean) = caught(
        path,
        "accumulate_into_output",
        LaunchShape::linear(2, 64),
        &zeroed,
    );
    assert!(clean.findings.is_empty(), "{}", findings_text(&clean));
}

#[test]
fn barrier_inside_if_is_barrier_divergence() {
    let path = "emu/tests/corpus/sync_in_if.cu";
    let args = [
        buffer("in", random_f32(24, 256)),
        buffer("out", vec![0f32; 2]),
        i32_arg("n", 256),
    ];
    let (line, outcome) = caught(
        path,
        "sync_in_if",
        LaunchShape::linear(2, 128).with_dynamic_shared(512),
        &args,
    );
    assert_caught(path, line, &outcome, |k| {
        k == FindingKind::BarrierDivergence
    });
}

#[test]
fn a_failed_assert_is_caught_with_the_gpu_message() {
    let path = "emu/tests/corpus/assert_positive.cu";
    let args = [
        buffer("in", vec![3i32, -1, 4, -5, 9, 2, 6, 5]),
        buffer("out", vec![0i32; 8]),
        i32_arg("n", 8),
    ];
    let (line, outcome) = caught(path, "assert_positive", LaunchShape::linear(1, 8), &args);
    assert!(!outcome.finished());
    assert_caught(path, line, &outcome, |k| k == FindingKind::AssertionFailed);
    assert!(
        outcome.printf.contains(&format!(
            "{path}:{line}: void assert_positive(const int *, int *, int): block: [0,0,0], thread: [1,0,0] Assertion `in[i] >= 0` failed."
        )),
        "{}",
        outcome.printf
    );
}

#[test]
fn heap_misuse_is_caught_at_its_bug_lines() {
    for (path, entry, kind) in [
        (
            "emu/tests/corpus/heap_overflow.cu",
            "heap_overflow",
            FindingKind::OutOfBounds {
                space: Space::Global,
            },
        ),
        (
            "emu/tests/corpus/heap_use_after_free.cu",
            "heap_use_after_free",
            FindingKind::UseAfterFree,
        ),
        (
            "emu/tests/corpus/heap_double_free.cu",
            "heap_double_free",
            FindingKind::DoubleFree,
        ),
    ] {
        let args = [buffer("out", vec![0i32; 8]), i32_arg("n", 8)];
        let (line, outcome) = caught(path, entry, LaunchShape::linear(1, 8), &args);
        assert_caught(path, line, &outcome, |k| k == kind);
    }
}

#[test]
fn unbounded_recursion_is_a_stack_overflow() {
    let path = "emu/tests/corpus/recursion_unbounded.cu";
    let args = [buffer("out", vec![0i32; 4]), i32_arg("n", 4)];
    let (line, outcome) = caught(
        path,
        "recursion_unbounded",
        LaunchShape::linear(1, 4),
        &args,
    );
    assert!(!outcome.finished());
    assert_caught(path, line, &outcome, |k| k == FindingKind::StackOverflow);
}

#[test]
fn warp_sync_misuse_is_caught_at_its_bug_lines() {
    let path = "emu/tests/corpus/syncwarp_bad_mask.cu";
    let (line, outcome) = caught(
        path,
        "syncwarp_bad_mask",
        LaunchShape::linear(1, 32),
        &[buffer("out", vec![0i32; 32])],
    );
    assert_caught(path, line, &outcome, |k| {
        k == FindingKind::WarpSync {
            problem: WarpSyncProblem::LaneNotInMask,
        }
    });
    let path = "emu/tests/corpus/shfl_lanes_missing.cu";
    let args = [
        buffer("in", (0..32).collect::<Vec<i32>>()),
        buffer("out", vec![0i32; 32]),
    ];
    let (line, outcome) = caught(
        path,
        "shfl_lanes_missing",
        LaunchShape::linear(1, 32),
        &args,
    );
    assert!(!outcome.finished());
    assert_caught(path, line, &outcome, |k| {
        k == FindingKind::WarpSync {
            problem: WarpSyncProblem::NeverArrive,
        }
    });
}

#[test]
fn spinning_forever_is_stopped_by_the_watchdog() {
    let path = "emu/tests/corpus/spin_forever.cu";
    let (line, outcome) = caught(
        path,
        "spin_forever",
        LaunchShape::linear(1, 32),
        &[buffer("flag", vec![0i32])],
    );
    assert!(!outcome.finished());
    assert_caught(path, line, &outcome, |k| k == FindingKind::Stuck);
}

#[test]
fn ch4_races_are_caught_at_their_bug_lines() {
    let path = "kernels/ch4_atomics/01_racy_increment.cu";
    let (line, outcome) = caught(
        path,
        "racy_increment",
        LaunchShape::linear(10, 16),
        &[buffer("x", vec![0i32])],
    );
    assert_eq!(line, 9);
    assert_caught(path, line, &outcome, is_race);
    let x = outcome.values::<i32>(0).unwrap_or_default();
    assert!(x.first().is_some_and(|&x| x > 0 && x < 160), "{x:?}");
    let text = text(3000, 25);
    for (file, entry) in [
        ("04_histogram_no_atomics", "histogram_no_atomics"),
        (
            "06_histogram_shared_no_merge_barrier",
            "histogram_shared_no_merge_barrier",
        ),
    ] {
        let path = format!("kernels/ch4_atomics/{file}.cu");
        let args = [
            buffer("text", text.clone()),
            u32_arg("n", text.len()),
            buffer("histo", vec![0u32; 128]),
        ];
        let (line, outcome) = caught(&path, entry, LaunchShape::linear(4, 64), &args);
        assert_caught(&path, line, &outcome, is_race);
        assert!(
            findings_text(&outcome).contains("histo["),
            "{}",
            findings_text(&outcome)
        );
    }
}

#[test]
fn ch4_one_bin_per_thread_is_wrong_when_the_block_is_smaller_than_the_bins() {
    let path = "kernels/ch4_atomics/07_histogram_shared_one_bin_per_thread.cu";
    let kernel = kernel(path, "histogram_shared_one_bin_per_thread");
    let text = text(3000, 26);
    let args = || {
        [
            buffer("text", text.clone()),
            u32_arg("n", text.len()),
            buffer("histo", vec![0u32; 128]),
        ]
    };
    let right = on_emu(
        &kernel,
        LaunchShape::linear(2, 128),
        &args(),
        Schedule::Hardware,
    );
    assert_eq!(right.values::<u32>(2), Some(&cpu_histogram(&text)[..]));
    let wrong = on_emu(
        &kernel,
        LaunchShape::linear(2, 64),
        &args(),
        Schedule::Hardware,
    );
    assert_ne!(wrong.values::<u32>(2), Some(&cpu_histogram(&text)[..]));
}

// ---------------------------------------------------------------------------------------------
// Learners' own files (tests/check_corpus): C++ names, CUDA headers, -I and -D

const CHECK_CORPUS: &str = "harness/tests/check_corpus";

fn corpus_flags(defines: &[&str]) -> CompileFlags {
    CompileFlags {
        include_dirs: vec![workspace_root().join(CHECK_CORPUS).join("include")],
        defines: defines.iter().map(ToString::to_string).collect(),
        std: None,
    }
}

#[test]
fn template_kernels_sum_exactly_on_both_backends() {
    let ints: Vec<i32> = (0..1000).collect();
    run_fixed(Fixed {
        path: "harness/tests/check_corpus/template_reduce.cu",
        entry: "block_sum<int, 128>",
        shape: LaunchShape::linear(8, 128),
        args: vec![
            buffer("in", ints),
            buffer("out", vec![0i32]),
            i32_arg("n", 1000),
        ],
        wants: vec![(1, Want::Exact(HostData::I32(vec![499_500])))],
        schedules: EVERY_SCHEDULE.to_vec(),
    });
    // Halves add exactly in any order, so the float instance is exact too.
    run_fixed(Fixed {
        path: "harness/tests/check_corpus/template_reduce.cu",
        entry: "block_sum<float, 256>",
        shape: LaunchShape::linear(4, 256),
        args: vec![
            buffer("in", vec![0.5f32; 1000]),
            buffer("out", vec![0f32]),
            i32_arg("n", 1000),
        ],
        wants: vec![(1, Want::Exact(HostData::F32(vec![500.0])))],
        schedules: vec![Schedule::Hardware],
    });
}

#[test]
fn namespaced_and_overloaded_kernels_match_the_cpu() {
    let x: Vec<f32> = (0..300u16).map(f32::from).collect();
    run_fixed(Fixed {
        path: "harness/tests/check_corpus/namespace_saxpy.cu",
        entry: "blas::saxpy",
        shape: LaunchShape::linear(2, 64),
        args: vec![
            i32_arg("n", 300),
            HostArg::scalar("a", Scalar::F32(2.0)),
            buffer("x", x.clone()),
            buffer("y", vec![1f32; 300]),
        ],
        wants: vec![(
            3,
            Want::Exact(HostData::F32(x.iter().map(|v| 2.0 * v + 1.0).collect())),
        )],
        schedules: vec![Schedule::Hardware],
    });
    run_fixed(Fixed {
        path: "harness/tests/check_corpus/overloads.cu",
        entry: "fill(int*, int, int)",
        shape: LaunchShape::linear(1, 64),
        args: vec![
            buffer("x", vec![0i32; 50]),
            i32_arg("v", 7),
            i32_arg("n", 50),
        ],
        wants: vec![(0, Want::Exact(HostData::I32((7..57).collect())))],
        schedules: vec![Schedule::Hardware],
    });
}

#[test]
fn cooperative_group_sums_are_exact_on_both_backends() {
    require_cuda_headers();
    let n = 250;
    let data: Vec<i32> = (0..n).map(|i| (i * 37 % 101) - 50).collect();
    let sum = |range: std::ops::Range<usize>| data[range].iter().sum::<i32>();
    run_fixed(Fixed {
        path: "harness/tests/check_corpus/coop_groups.cu",
        entry: "tile_sums",
        shape: LaunchShape::linear(2, 128),
        args: vec![
            buffer("in", data.clone()),
            buffer("warps", vec![0i32; 8]),
            buffer("blocks", vec![0i32; 2]),
            i32_arg("n", n as usize),
        ],
        wants: vec![
            (
                1,
                Want::Exact(HostData::I32(
                    (0..8)
                        .map(|w| sum(w * 32..(w * 32 + 32).min(250)))
                        .collect(),
                )),
            ),
            (
                2,
                Want::Exact(HostData::I32(vec![sum(0..128), sum(128..250)])),
            ),
        ],
        schedules: EVERY_SCHEDULE.to_vec(),
    });
}

#[test]
fn half_precision_fma_and_widening_are_exact_on_both_backends() {
    require_cuda_headers();
    use half::f16;
    let x: Vec<f16> = (0..20u16).map(|i| f16::from_f32(f32::from(i))).collect();
    let y: Vec<f16> = (0..20u16)
        .map(|i| f16::from_f32(1.0 + f32::from(i) * 0.5))
        .collect();
    run_fixed(Fixed {
        path: "harness/tests/check_corpus/half_axpy.cu",
        entry: "haxpy",
        shape: LaunchShape::linear(1, 32),
        args: vec![
            i32_arg("n", 20),
            HostArg::scalar("a", Scalar::F16(f16::from_f32(0.5))),
            buffer("x", x),
            buffer("y", vec![f16::from_f32(1.0); 20]),
        ],
        wants: vec![(3, Want::Exact(HostData::F16(y)))],
        schedules: vec![Schedule::Hardware],
    });
    let mut rng = seeded_rng(9);
    let halves: Vec<f16> = (0..64)
        .map(|_| f16::from_f32(rng.random::<f32>() * 8.0 - 4.0))
        .collect();
    run_fixed(Fixed {
        path: "harness/tests/check_corpus/half_axpy.cu",
        entry: "widen",
        shape: LaunchShape::linear(2, 32),
        args: vec![
            i32_arg("n", 64),
            buffer("in", halves.clone()),
            buffer("out", vec![0f32; 64]),
        ],
        wants: vec![(
            2,
            Want::Exact(HostData::F32(halves.iter().map(|h| h.to_f32()).collect())),
        )],
        schedules: vec![Schedule::Hardware],
    });
}

#[test]
fn standard_headers_give_the_same_lengths_on_both_backends() {
    require_cuda_headers();
    let points: Vec<f32> = random_f32(21, 64).iter().map(|v| v * 100.0).collect();
    let lengths: Vec<f32> = points
        .chunks(2)
        .map(|p| (p[0] * p[0] + p[1] * p[1]).sqrt())
        .collect();
    let clamped: Vec<u32> = lengths
        .iter()
        .map(|&l| {
            let wide = (l as i64) * i64::from(i32::MAX);
            u32::try_from(wide).unwrap_or(u32::MAX)
        })
        .collect();
    run_fixed(Fixed {
        path: "harness/tests/check_corpus/std_headers.cu",
        entry: "lengths",
        shape: LaunchShape::linear(1, 32),
        args: vec![
            buffer("points", points),
            buffer("length", vec![0f32; 32]),
            buffer("clamped", vec![0u32; 32]),
            i32_arg("n", 32),
        ],
        wants: vec![
            // x·x + y·y may be contracted into an fma, so within the error of three roundings
            // (each at most half an ulp of the result, relative 2^-24), not bit for bit.
            (
                1,
                Want::Within {
                    want: lengths.iter().map(|&l| f64::from(l)).collect(),
                    bound: lengths
                        .iter()
                        .map(|&l| 3.0 * f64::from(l) * 2f64.powi(-24))
                        .collect(),
                },
            ),
            (2, Want::Exact(HostData::U32(clamped))),
        ],
        schedules: vec![Schedule::Hardware],
    });
}

#[test]
fn the_guarded_whole_program_counts_like_the_cpu_with_its_include_and_macro() {
    let text: Vec<u8> = {
        let mut rng = seeded_rng(13);
        (0..5000).map(|_| rng.random::<u8>()).collect()
    };
    for bins in [64usize, 16] {
        let mut want = vec![0u32; bins];
        for &byte in &text {
            want[usize::from(byte) % bins] += 1;
        }
        let define = format!("BINS={bins}");
        let defines: Vec<&str> = if bins == 64 {
            vec![]
        } else {
            vec![define.as_str()]
        };
        run_fixed_with(
            Fixed {
                path: "harness/tests/check_corpus/whole_program_guarded.cu",
                entry: "histogram<256>",
                shape: LaunchShape::linear(4, 256),
                args: vec![
                    buffer("text", text.clone()),
                    i32_arg("n", text.len()),
                    buffer("bins", vec![0u32; bins]),
                ],
                wants: vec![(2, Want::Exact(HostData::U32(want)))],
                schedules: EVERY_SCHEDULE.to_vec(),
            },
            &corpus_flags(&defines),
        );
    }
}

#[test]
fn a_multi_file_samples_kernel_counts_like_the_cpu_with_its_headers_host_code_left_out() {
    let data: Vec<u32> = (0..1000).map(|i| i * 7 + 3).collect();
    let mut want = vec![0u32; 16];
    for value in &data {
        want[(value % 16) as usize] += 1;
    }
    run_fixed_with(
        Fixed {
            path: "harness/tests/check_corpus/project/src/histogram.cu",
            entry: "histogramKernel",
            shape: LaunchShape::linear(4, 64),
            args: vec![
                buffer("histogram", vec![0u32; 16]),
                buffer("data", data.clone()),
                u32_arg("count", data.len()),
            ],
            wants: vec![(0, Want::Exact(HostData::U32(want)))],
            schedules: EVERY_SCHEDULE.to_vec(),
        },
        &CompileFlags {
            include_dirs: vec![workspace_root().join(CHECK_CORPUS).join("project/src")],
            ..CompileFlags::default()
        },
    );
}

#[test]
fn dynamic_shared_memory_reverses_on_both_backends() {
    let values: Vec<i32> = (0..64).map(|i| i * i - 100).collect();
    let mut reversed = values.clone();
    reversed.reverse();
    run_fixed(Fixed {
        path: "harness/tests/check_corpus/dynamic_reverse.cu",
        entry: "dynamic_reverse",
        shape: LaunchShape {
            dynamic_shared_bytes: 64 * 4,
            ..LaunchShape::linear(1, 64)
        },
        args: vec![buffer("d", values), i32_arg("n", 64)],
        wants: vec![(0, Want::Exact(HostData::I32(reversed)))],
        schedules: EVERY_SCHEDULE.to_vec(),
    });
}

#[test]
fn the_plain_pointer_kernel_beside_a_texture_one_runs_on_both_backends() {
    let input: Vec<f32> = (0..100).map(|i| i as f32 * 0.5).collect();
    let doubled: Vec<f32> = input.iter().map(|x| 2.0 * x).collect();
    run_fixed(Fixed {
        path: "harness/tests/check_corpus/texture_fetch.cu",
        entry: "scale_plain",
        shape: LaunchShape::linear(4, 32),
        args: vec![
            buffer("out", vec![0f32; 100]),
            buffer("in", input),
            HostArg::scalar("factor", Scalar::F32(2.0)),
            i32_arg("n", 100),
        ],
        wants: vec![(0, Want::Exact(HostData::F32(doubled)))],
        schedules: vec![Schedule::Hardware],
    });
}

#[test]
fn constant_and_device_symbols_set_before_the_launch_agree_on_both_backends() {
    let path = "harness/tests/check_corpus/constant_taps.cu";
    require_nvrtc();
    let source = std::fs::read_to_string(workspace_root().join(path)).expect("corpus file");
    let program = Program::new(path, source, &CompileFlags::default());
    let names = ["taps".to_string(), "filter::gain".to_string()];
    let mut kernel = program
        .kernel_with_symbols("convolve5", &names)
        .unwrap_or_else(|e| panic!("{e}"));
    let specs: Vec<harness::check::SymbolSpec> = ["taps:f32[5]=const:1", "filter::gain:f32=2"]
        .iter()
        .map(|spec| spec.parse().expect("a symbol spec"))
        .collect();
    kernel.set_symbols(&specs).unwrap_or_else(|e| panic!("{e}"));
    let n = 50usize;
    let args = vec![
        buffer("out", vec![0f32; n]),
        buffer("in", (0..n).map(|i| i as f32).collect::<Vec<_>>()),
        i32_arg("n", n),
    ];
    let want: Vec<f32> = (0..n as i32)
        .map(|i| 2.0 * (-2..=2).map(|k| (i + k).clamp(0, 49)).sum::<i32>() as f32)
        .collect();
    let shape = LaunchShape::linear(2, 32);
    let emu = on_emu(&kernel, shape, &args, Schedule::Hardware);
    assert!(emu.findings.is_empty(), "{}", findings_text(&emu));
    assert_eq!(output(&emu, 0, path), &HostData::F32(want.clone()));
    let Some(mut device) = gpu() else {
        return;
    };
    let cuda = kernel
        .run(&mut device, shape, &args)
        .unwrap_or_else(|e| panic!("{path}: {e}"));
    eprintln!("{path}: cuda {}", head(output(&cuda, 0, path)));
    assert_eq!(output(&cuda, 0, path), &HostData::F32(want));
}

#[test]
fn a_tile_wider_than_a_warp_sums_on_both_backends() {
    let values: Vec<i32> = (0..256).map(|i| i * 3 - 100).collect();
    let sums: Vec<i32> = values.chunks(64).map(|tile| tile.iter().sum()).collect();
    run_fixed(Fixed {
        path: "harness/tests/check_corpus/multi_warp_tile.cu",
        entry: "tile_sums",
        shape: LaunchShape::linear(2, 128),
        args: vec![buffer("in", values), buffer("out", vec![0i32; 4])],
        wants: vec![(1, Want::Exact(HostData::I32(sums)))],
        schedules: EVERY_SCHEDULE.to_vec(),
    });
}

#[test]
fn nvcc_habits_compile_and_agree_on_both_backends() {
    let input: Vec<half::bf16> = (0..100).map(|i| half::bf16::from_f32(i as f32)).collect();
    run_fixed(Fixed {
        path: "harness/tests/check_corpus/nvcc_habits.cu",
        entry: "scaled_max",
        shape: LaunchShape::linear(1, 64),
        args: vec![
            buffer("in", input),
            buffer("out", vec![0f32; 1]),
            u32_arg("n", 100),
        ],
        wants: vec![(
            1,
            Want::Exact(HostData::F32(vec![99.0 * std::f32::consts::PI])),
        )],
        schedules: vec![Schedule::Hardware],
    });
}

#[test]
fn a_halo_read_through_a_shifted_pointer_matches_the_cpu() {
    const RADIUS: usize = 3;
    let n = 1000;
    let input = random_f32(21, n + 2 * RADIUS);
    let want: Vec<f64> = (0..n)
        .map(|i| {
            let window = &input[i..=i + 2 * RADIUS];
            f64::from(window.iter().sum::<f32>() / (2 * RADIUS + 1) as f32)
        })
        .collect();
    // Seven additions and a division, each rounding once, of values below 1 in magnitude.
    let bound = vec![8.0 * f64::from(f32::EPSILON); n];
    run_fixed(Fixed {
        path: "harness/tests/check_corpus/halo_stencil.cu",
        entry: "box_filter",
        shape: LaunchShape::linear(4, 128),
        args: vec![
            HostArg::Buffer {
                label: "in".into(),
                data: HostData::F32(input),
                uninit: false,
                offset: RADIUS,
            },
            buffer("out", vec![0.0f32; n]),
            i32_arg("n", n),
        ],
        wants: vec![(1, Want::Within { want, bound })],
        schedules: vec![Schedule::Hardware],
    });
}

#[test]
fn arrays_sharing_one_allocation_match_the_cpu() {
    let n = 512;
    let state: Vec<f32> = (0..2 * n).map(|i| i as f32).collect();
    let mut want = state.clone();
    for i in 0..n {
        want[i] += 0.5 * state[n + i];
    }
    run_fixed(Fixed {
        path: "harness/tests/check_corpus/one_allocation.cu",
        entry: "drift",
        shape: LaunchShape::linear(4, 128),
        args: vec![
            buffer("pos", state),
            HostArg::Alias {
                label: "vel".into(),
                target: 0,
                offset: n,
            },
            HostArg::scalar("dt", Scalar::F32(0.5)),
            i32_arg("n", n),
        ],
        // Halves of integers below 2^11 and their sums are exact in f32.
        wants: vec![(0, Want::Exact(HostData::F32(want)))],
        schedules: EVERY_SCHEDULE.to_vec(),
    });
    let values: Vec<f32> = (0..n).map(|i| i as f32).collect();
    run_fixed(Fixed {
        path: "harness/tests/check_corpus/one_allocation.cu",
        entry: "scale",
        shape: LaunchShape::linear(4, 128),
        args: vec![
            buffer("x", values.clone()),
            HostArg::Alias {
                label: "in".into(),
                target: 0,
                offset: 0,
            },
            HostArg::scalar("factor", Scalar::F32(3.0)),
            i32_arg("n", n),
        ],
        wants: vec![(
            0,
            Want::Exact(HostData::F32(values.iter().map(|v| 3.0 * v).collect())),
        )],
        schedules: vec![Schedule::Hardware],
    });
}

#[test]
fn a_class_of_host_and_device_members_counts_like_the_cpu() {
    require_cuda_headers();
    let text = text(3000, 8);
    let mut want = vec![0u32; 16];
    for &byte in &text {
        want[usize::from(byte) % 16] += 1;
    }
    let n = text.len();
    run_fixed(Fixed {
        path: "harness/tests/check_corpus/mixed_class.cu",
        entry: "count_bytes",
        shape: LaunchShape::linear(4, 128),
        args: vec![
            buffer("bins", vec![0u32; 16]),
            buffer("text", text),
            i32_arg("n", n),
        ],
        wants: vec![(0, Want::Exact(HostData::U32(want)))],
        schedules: vec![Schedule::Hardware],
    });
}

#[test]
fn standard_names_and_cub_match_the_cpu() {
    require_cuda_headers();
    let n = 1000;
    let input = random_f32(22, n);
    let want: Vec<f64> = input
        .iter()
        .map(|&x| f64::from(if x > 0.0 { x } else { x.exp() - 1.0 }))
        .collect();
    // CUDA's expf is within 2 ulps; the subtraction rounds once more.
    let bound = vec![4.0 * f64::from(f32::EPSILON); n];
    run_fixed(Fixed {
        path: "harness/tests/check_corpus/std_names.cu",
        entry: "activate",
        shape: LaunchShape::linear(4, 256),
        args: vec![
            buffer("in", input),
            buffer("out", vec![0.0f32; n]),
            i32_arg("n", n),
        ],
        wants: vec![(1, Want::Within { want, bound })],
        schedules: vec![Schedule::Hardware],
    });
    let values: Vec<i32> = (0..n as i32).collect();
    let blocks = 4;
    let want: Vec<i32> = (0..blocks)
        .map(|b| {
            values
                .iter()
                .enumerate()
                .filter(|(i, _)| (i / 128) % blocks == b)
                .map(|(_, v)| v)
                .sum()
        })
        .collect();
    run_fixed(Fixed {
        path: "harness/tests/check_corpus/cub_block_sum.cu",
        entry: "block_sums",
        shape: LaunchShape::linear(blocks as u32, 128),
        args: vec![
            buffer("in", values),
            buffer("out", vec![0i32; blocks]),
            i32_arg("n", n),
        ],
        wants: vec![(1, Want::Exact(HostData::I32(want)))],
        schedules: vec![Schedule::Hardware],
    });
}

/// A struct by value (a functor with a scale, two pointers and a count; a lock handle) runs on
/// the emulator and, where there is one, on the GPU, with its pointer fields' buffers written
/// back: saxpy's `y` is exact (2·i + 1), and four blocks each add 1 under the lock.
#[test]
fn structs_by_value_run_on_both_backends() {
    let path = "harness/tests/check_corpus/struct_args.cu";
    let n = 300usize;
    let x: Vec<f32> = (0..n).map(|i| i as f32).collect();
    let functor = HostArg::Struct {
        label: "f".into(),
        fields: vec![
            HostArg::scalar("f.a", Scalar::F32(2.0)),
            buffer("f.x", x),
            buffer("f.y", vec![1.0f32; n]),
            i32_arg("f.n", n),
        ],
    };
    let want_y: Vec<f32> = (0..n).map(|i| 2.0 * i as f32 + 1.0).collect();
    let saxpy = kernel(path, "saxpy");
    let saxpy_shape = LaunchShape::linear(3, 128);
    let lock = HostArg::Struct {
        label: "lock".into(),
        fields: vec![buffer("lock.mutex", vec![0i32])],
    };
    let lock_args = [lock, buffer("total", vec![0i32])];
    let locked_add = kernel(path, "locked_add");
    let lock_shape = LaunchShape::linear(4, 32);
    let field = |outcome: &Outcome, label: &str| -> Vec<f32> {
        outcome
            .field_outputs
            .iter()
            .find(|(_, l, _)| l == label)
            .and_then(|(_, _, data)| data.values::<f32>())
            .unwrap_or_else(|| panic!("no field buffer {label}"))
            .to_vec()
    };
    let mut devices = vec![(
        "emu",
        Device::open(BackendChoice::Emu).expect("the emulator"),
    )];
    if let Some(device) = gpu() {
        devices.push(("cuda", device));
    }
    for (name, mut device) in devices {
        let outcome = saxpy
            .run(&mut device, saxpy_shape, std::slice::from_ref(&functor))
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(
            outcome.findings.is_empty(),
            "{name}: {}",
            findings_text(&outcome)
        );
        assert_eq!(field(&outcome, "f.y"), want_y, "{name}");
        let outcome = locked_add
            .run(&mut device, lock_shape, &lock_args)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(
            outcome.findings.is_empty(),
            "{name}: {}",
            findings_text(&outcome)
        );
        let total = outcome.outputs[1].as_ref().and_then(|d| d.values::<i32>());
        assert_eq!(total, Some(&[4][..]), "{name}");
    }
}
