//! `cargo run -p ch5-mutex-dot`: the chapter in teaching order, on whichever backend is chosen.

use std::io::Write;
use std::path::PathBuf;

use harness::report::{climb_svg, progress, sweep_svg, table, write_gpu_table};
use harness::verify::bounds;
use harness::walk::{
    checker_section, flush, heading, opening, repeated_launches, say, selected, timing_skipped,
    with_progress, working,
};
use harness::{Arg, Buffer, Device, HarnessError, LaunchShape, Result, VendorTiming};

use crate::{
    Ch5Variant, Data, DotCheck, LOCK_SHAPE, LOOSE_RELATIVE_TOLERANCE, Step, VARIANTS, abs_dot_f64,
    check_block_for, check_dot_launch, dot_f64, host_sum_f32, run_dot, run_increment,
    run_lock_order, vectors,
};

/// The launch every dot step uses: 64 blocks of 256 threads.
pub const DOT_SHAPE: LaunchShape = LaunchShape::linear(64, 256);
/// How many times the lock steps are repeated, to show a count that varies or holds.
pub const LOCK_REPEATS: usize = 5;
/// Values per vector in the dot steps on the emulator, small enough to finish in a second.
pub const EMULATOR_DOT_LEN: usize = 1 << 20;
/// Values per vector in the dot steps on a GPU.
pub const GPU_DOT_LEN: usize = 1 << 24;
/// Largest timing input: the kernels' length is a 32-bit `unsigned int`, and two vectors of
/// 2³⁰ floats already take 8 GiB.
pub const MAX_TIMING_LEN: u64 = 1 << 30;

#[derive(Debug, Clone)]
pub struct Options {
    pub seed: u64,
    pub variant: Option<String>,
    /// Values per vector in the GPU timing table: 2²⁶ (256 MiB each) by default.
    pub timing_len: u64,
    pub out: PathBuf,
}

impl Options {
    pub fn new(seed: u64, out: PathBuf) -> Self {
        Self {
            seed,
            variant: None,
            timing_len: 1 << 26,
            out,
        }
    }
}

/// Writes the walk-through to `out`; plots go to `options.out`.
pub fn walkthrough(device: &mut Device, options: &Options, out: &mut dyn Write) -> Result<()> {
    let mut page = String::new();
    let dot_len = if device.kind().is_cuda() {
        GPU_DOT_LEN
    } else {
        EMULATOR_DOT_LEN
    };
    opening(
        &mut page,
        device,
        &[&format!(
            "seed {} · dot inputs: two vectors of {dot_len} floats uniform in [0, 1) · plots in {}",
            options.seed,
            options.out.display()
        )],
        &options.out,
        out,
    )?;

    let selected = selected(VARIANTS, options.variant.as_deref())?;
    let needs_vectors = selected.iter().any(|(_, v)| v.kind.is_dot());
    let (a, b) = if needs_vectors {
        vectors(dot_len, Data::Positive, options.seed)
    } else {
        (Vec::new(), Vec::new())
    };
    for (number, variant) in selected {
        heading(&mut page, number, variant);
        let page = &mut page;
        with_progress(&format!("{number}. {}", variant.name), |_| -> Result<()> {
            match variant.kind {
                Step::LockOrder => lock_order_step(device, variant, page)?,
                Step::Increment => increment_step(device, variant, page)?,
                _ => dot_step(device, variant, &a, &b, page)?,
            }
            if options.variant.is_some()
                && device.kind().is_cuda()
                && variant.kind.is_dot()
                && variant.expect.is_correct()
            {
                profiled_launch(device, variant, options, page)?;
            }
            Ok(())
        })?;
        flush(page, out)?;
    }
    if options.variant.is_none() {
        say(&mut page, "");
        timing_section(device, options, &mut page, out)?;
        flush(&mut page, out)?;
    }
    Ok(())
}

/// The launch shape the timing table gives `variant`: the one-launch and vectorized kernels a
/// grid sized to the GPU, the others 1024 blocks; always 256 threads.
pub fn timing_shape(device: &mut Device, variant: &Ch5Variant) -> Result<LaunchShape> {
    let fixed = LaunchShape::linear(1024, 256);
    Ok(match variant.kind {
        Step::OneLaunchDot | Step::AtomicDot | Step::WarpPartialDot { vectorized: true } => {
            gpu_sized(device)?
        }
        _ => fixed,
    })
}

/// As many blocks of 256 threads as the GPU runs at once (one wave), by the driver's occupancy
/// calculator for the one-launch kernel; 1024 on the emulator, which has no multiprocessors.
pub fn gpu_sized(device: &mut Device) -> Result<LaunchShape> {
    let kernel = crate::variant("dot-one-launch").kernel;
    let blocks = device.resident_blocks(&kernel, 256, 0)?.unwrap_or(1024);
    Ok(LaunchShape::linear(blocks, 256))
}

/// With `--variant` on a GPU, one more launch at `--size` with the timing table's shape,
/// checked: the launch a profiler such as Nsight Compute (`ncu --launch-skip 1`) reads.
fn profiled_launch(
    device: &mut Device,
    variant: &Ch5Variant,
    options: &Options,
    page: &mut String,
) -> Result<()> {
    let n = options.timing_len.clamp(1, MAX_TIMING_LEN) as usize;
    let (a, b) = vectors(n, Data::Positive, options.seed);
    let shape = timing_shape(device, variant)?;
    let outcome = run_dot(device, variant, &a, &b, shape)?;
    let check = DotCheck::for_step(variant.kind, outcome.result, &a, &b, shape);
    say(
        page,
        &format!("then {n} values · {shape} (the launch to profile): {check}"),
    );
    Ok(())
}

fn lock_order_step(device: &mut Device, variant: &Ch5Variant, page: &mut String) -> Result<()> {
    let blocks = LOCK_SHAPE.grid.x;
    say(
        page,
        &format!(
            "{LOCK_SHAPE}: thread 0 of each block reads the list's length, writes its block index there and stores length + 1, all under the lock"
        ),
    );
    let outcome = run_lock_order(device, variant, LOCK_SHAPE)?;
    let listed: Vec<String> = outcome.result.order.iter().map(u32::to_string).collect();
    say(
        page,
        &format!("order the blocks took the lock: {}", listed.join(", ")),
    );
    let verdict = if outcome.result.is_complete(blocks) {
        format!(
            "✓ length {}: every block appears exactly once",
            outcome.result.length
        )
    } else {
        format!(
            "✗ length {}: the list is not the {blocks} blocks once each",
            outcome.result.length
        )
    };
    say(page, &verdict);
    checker_section(device, variant, &outcome.report.findings, page);
    Ok(())
}

fn increment_step(device: &mut Device, variant: &Ch5Variant, page: &mut String) -> Result<()> {
    let want = i32::try_from(LOCK_SHAPE.grid.x).unwrap_or(i32::MAX);
    say(
        page,
        &format!("{LOCK_SHAPE}: thread 0 of each block adds 1, so x[0] should end at {want}"),
    );
    let findings = repeated_launches(page, "x[0]", &want, LOCK_REPEATS, || {
        let outcome = run_increment(device, variant, LOCK_SHAPE)?;
        Ok((outcome.result, outcome.report.findings))
    })?;
    checker_section(device, variant, &findings, page);
    Ok(())
}

fn dot_step(
    device: &mut Device,
    variant: &Ch5Variant,
    a: &[f32],
    b: &[f32],
    page: &mut String,
) -> Result<()> {
    let outcome = run_dot(device, variant, a, b, DOT_SHAPE)?;
    let check = DotCheck::for_step(variant.kind, outcome.result, a, b, DOT_SHAPE);
    say(page, &format!("{DOT_SHAPE}: {check}"));
    if variant.name == "partial-dot-typo" {
        let loose = if check.passes_loose_tolerance() {
            "passes it"
        } else {
            "fails it"
        };
        say(
            page,
            &format!(
                "a guessed tolerance of {LOOSE_RELATIVE_TOLERANCE:.0e} relative {loose}; the bound from the summation error, {:.1e} relative, {}",
                check.bound / check.want.abs(),
                if check.is_within() {
                    "passes it too"
                } else {
                    "does not"
                }
            ),
        );
        typo_sizes_table(device, variant, page)?;
    }
    checker_section(device, variant, &outcome.report.findings, page);
    Ok(())
}

/// The typo's error against the input size: it mixes a few neighbouring threads' sums in place
/// of all of them, so the more values each thread sums, the more alike those sums are and the
/// smaller the error, while the bound stays far below it.
fn typo_sizes_table(device: &mut Device, variant: &Ch5Variant, page: &mut String) -> Result<()> {
    let lengths = [1usize << 14, 1 << 16, 1 << 18, 1 << 20, 1 << 22];
    let mut rows = Vec::new();
    for (index, &len) in lengths.iter().enumerate() {
        let (a, b) = vectors(len, Data::Positive, 100 + index as u64);
        let outcome = run_dot(device, variant, &a, &b, DOT_SHAPE)?;
        let check = DotCheck::new(outcome.result, &a, &b, DOT_SHAPE);
        let verdict = |passes: bool| if passes { "passes" } else { "fails" };
        rows.push(vec![
            len.to_string(),
            format!("{:.2}%", 100.0 * check.relative_error()),
            verdict(check.passes_loose_tolerance()).to_string(),
            format!("{:.1e}", check.bound / check.want.abs()),
            verdict(check.is_within()).to_string(),
        ]);
    }
    say(
        page,
        &format!("the same typo on {DOT_SHAPE} as the input grows (seeds 100, 101, …):"),
    );
    say(
        page,
        &table(
            &[
                "values",
                "error",
                "1e-2 relative",
                "bound, relative",
                "bound",
            ],
            rows,
        ),
    );
    Ok(())
}

fn timing_section(
    device: &mut Device,
    options: &Options,
    page: &mut String,
    out: &mut dyn Write,
) -> Result<()> {
    say(page, "## GPU timing");
    if !device.kind().is_cuda() {
        say(
            page,
            &timing_skipped(
                "the timing table against cuBLAS's cublasSdot, the climb's chart and the blocks-per-grid sweep",
            ),
        );
        return Ok(());
    }
    let n = options.timing_len.clamp(1, MAX_TIMING_LEN) as usize;
    let (a, b) = vectors(n, Data::Positive, options.seed);
    let input_bytes = 2 * n * std::mem::size_of::<f32>();
    say(
        page,
        &format!(
            "input: two vectors of {n} floats ({:.0} MiB together)",
            input_bytes as f64 / f64::from(1 << 20)
        ),
    );
    flush(page, out)?;
    let line = working("checking and timing every row");

    let shape = LaunchShape::linear(1024, 256);
    let gpu_sized = gpu_sized(device)?;
    let dot_rows = [
        ("partial-dot", shape),
        ("dot-warp-shuffle", shape),
        ("dot-vectorized", shape),
        ("dot-vectorized", gpu_sized),
        ("dot-one-launch", gpu_sized),
    ];
    // Every result is checked before anything is timed.
    let exercise = [("dot-mutex", shape), ("dot-atomic-add", gpu_sized)];
    for (name, shape) in dot_rows.iter().copied().chain(exercise) {
        let variant = crate::variant(name);
        let outcome = run_dot(device, variant, &a, &b, shape)?;
        let check = DotCheck::for_step(variant.kind, outcome.result, &a, &b, shape);
        if !check.is_within() {
            return Err(HarnessError::Invalid(format!(
                "{name} is wrong on the timing input: {check}"
            )));
        }
    }
    let copy_ms = device
        .time_device_copy_ms(input_bytes, REPETITIONS)?
        .ok_or_else(|| HarnessError::Invalid("the device copy could not be timed".into()))?;
    let mut inputs = TimingInputs::upload(device, &a, &b, shape)?;
    let cublas = inputs.time_cublas(device, &a, &b)?;
    let cublas_ms = cublas.ms();

    let mut lines = vec![(
        format!("partial-dot kernel alone ({shape})"),
        inputs.time_dot(
            device,
            crate::variant("partial-dot"),
            shape,
            REPETITIONS,
            false,
        )?,
    )];
    let mut climb = Vec::new();
    for (name, shape) in dot_rows {
        let variant = crate::variant(name);
        let ms = inputs.time_dot(device, variant, shape, REPETITIONS, true)?;
        let what = if variant.kind == Step::OneLaunchDot {
            format!("{name} ({shape})")
        } else {
            format!("{name} + host sum of {} block sums ({shape})", shape.grid.x)
        };
        lines.push((what, ms));
        climb.push((format!("{name}, {} blocks", shape.grid.x), ms));
    }
    lines.push((
        format!("dot-mutex, c zeroed first ({shape})"),
        inputs.time_dot_mutex(device, shape, REPETITIONS)?,
    ));
    // The chapter's exercise: the one-launch dot with an atomicAdd per block for its last block.
    lines.push((
        format!("dot-atomic-add, c zeroed first ({gpu_sized})"),
        inputs.time_dot_atomic_add(device, gpu_sized, REPETITIONS)?,
    ));
    let cublas_line = match &cublas {
        VendorTiming::Ms(ms) => Some((CUBLAS.to_string(), *ms)),
        VendorTiming::Unavailable(_) => None,
    };
    lines.extend(cublas_line);
    lines.push((
        format!("device-to-device copy of both inputs ({input_bytes} bytes)"),
        copy_ms,
    ));

    let gb = input_bytes as f64 / 1e9;
    let mut rows: Vec<Vec<String>> = lines
        .iter()
        .map(|(name, ms)| {
            vec![
                name.clone(),
                format!("{ms:.3}"),
                format!("{:.1}", gb / (ms / 1e3)),
                cublas_ms.map_or_else(|| "—".to_string(), |r| format!("{:.2}", r / ms)),
                format!("{:.2}", ms / copy_ms),
            ]
        })
        .collect();
    if let VendorTiming::Unavailable(why) = &cublas {
        rows.push(vec![
            CUBLAS.to_string(),
            why.clone(),
            "—".into(),
            "—".into(),
            "—".into(),
        ]);
    }
    let rendered = table(
        &[
            "what",
            "ms",
            "input GB/s",
            "× cuBLAS's rate",
            "time ÷ copy time",
        ],
        rows,
    );
    say(page, &rendered);
    let how = "every result, cuBLAS's too, was checked against the CPU first; rows with a host sum include copying the block sums back and adding them; × cuBLAS's rate is cuBLAS's time over the row's; the copy reads and writes the same bytes in the same run";
    say(page, how);
    if let Some(reference) = cublas_ms {
        let chart = options.out.join("climb.svg");
        let steps: Vec<(String, f64)> = climb
            .iter()
            .map(|(name, ms)| (name.clone(), reference / ms))
            .collect();
        climb_svg(
            &chart,
            &format!(
                "dot product on {}: rate ÷ cuBLAS cublasSdot's",
                device.name()
            ),
            "rate ÷ cuBLAS's",
            &steps,
        )?;
        say(page, &format!("chart: {}", chart.display()));
    }
    line.finish_and_clear();
    flush(page, out)?;
    let sweep = blocks_sweep(device, &mut inputs, options, page)?;
    let file = write_gpu_table(
        &options.out,
        device.name(),
        "ch5-mutex-dot --backend cuda",
        &format!(
            "two vectors of {n} floats, seed {}; {REPETITIONS} timed launches after one warm-up, CUDA events; cuBLAS in the same process",
            options.seed
        ),
        &format!("{rendered}\n\nBlocks-per-grid sweep, 256 threads per block:\n\n{sweep}"),
    )?;
    say(page, &format!("tables for the book: {}", file.display()));
    Ok(())
}

/// Timed launches per row, after one warm-up.
pub const REPETITIONS: u32 = 10;
/// The reference row's name.
pub const CUBLAS: &str = "cuBLAS cublasSdot";

/// The timing section's inputs and outputs, on the device once for every timed launch.
struct TimingInputs {
    a: Buffer<f32>,
    b: Buffer<f32>,
    length: u32,
    c: Buffer<f32>,
    mutex: Buffer<i32>,
}

impl TimingInputs {
    fn upload(device: &mut Device, a: &[f32], b: &[f32], shape: LaunchShape) -> Result<Self> {
        Ok(Self {
            length: check_dot_launch(a, b, shape)?,
            a: device.upload(a, "a")?,
            b: device.upload(b, "b")?,
            c: device.zeros(1, "c")?,
            mutex: device.zeros(1, "mutex")?,
        })
    }

    /// cuBLAS on the same vectors, its result checked under the bound for any summation order.
    fn time_cublas(&mut self, device: &mut Device, a: &[f32], b: &[f32]) -> Result<VendorTiming> {
        let timing = device.sdot_reference_ms(&self.a, &self.b, &mut self.c, REPETITIONS)?;
        if timing.ms().is_some() {
            let got = device
                .download(&self.c)?
                .first()
                .copied()
                .unwrap_or_default();
            let error = (f64::from(got) - dot_f64(a, b)).abs();
            let bound = bounds::sum_f32(a.len() as u64, abs_dot_f64(a, b));
            if error > bound {
                return Err(HarnessError::Invalid(format!(
                    "cuBLAS's dot product {got} is off by {error:.2e}, more than any summation order allows ({bound:.2e})"
                )));
            }
        }
        Ok(timing)
    }

    /// A dot kernel of `variant` on `shape`; for the kernels that leave block sums, with them
    /// read back and added on the host when `with_host_sum`.
    fn time_dot(
        &self,
        device: &mut Device,
        variant: &Ch5Variant,
        shape: LaunchShape,
        repetitions: u32,
        with_host_sum: bool,
    ) -> Result<f64> {
        check_block_for(variant, shape)?;
        let kernel = variant.kernel;
        let partial = device.zeros::<f32>(shape.grid.x as usize, "partial")?;
        let count = device.zeros::<u32>(1, "count")?;
        let one_launch = variant.kind == Step::OneLaunchDot;
        let mut args = vec![
            Arg::from(&self.a),
            Arg::from(&self.b),
            Arg::U32(self.length),
            Arg::from(&partial),
        ];
        if one_launch {
            args.extend([Arg::from(&count), Arg::from(&self.c)]);
        }
        Ok(device
            .time_ms(repetitions, |device| {
                device.launch_async(&kernel, shape, &args)?;
                if with_host_sum && !one_launch {
                    std::hint::black_box(host_sum_f32(&device.download(&partial)?));
                }
                Ok(())
            })?
            .unwrap_or(f64::NAN))
    }

    /// partial-dot's kernel alone, or with the block sums read back and added on the host.
    fn time_partial_dot(
        &self,
        device: &mut Device,
        shape: LaunchShape,
        repetitions: u32,
        with_host_sum: bool,
    ) -> Result<f64> {
        self.time_dot(
            device,
            crate::variant("partial-dot"),
            shape,
            repetitions,
            with_host_sum,
        )
    }

    /// dot-atomic-add, with the zeroing of `c` every launch needs.
    fn time_dot_atomic_add(
        &mut self,
        device: &mut Device,
        shape: LaunchShape,
        repetitions: u32,
    ) -> Result<f64> {
        let kernel = crate::variant("dot-atomic-add").kernel;
        let Self {
            a, b, length, c, ..
        } = self;
        Ok(device
            .time_ms(repetitions, |device| {
                device.clear(c)?;
                device.launch_async(
                    &kernel,
                    shape,
                    &[
                        Arg::from(&*a),
                        Arg::from(&*b),
                        Arg::U32(*length),
                        Arg::from(&*c),
                    ],
                )
            })?
            .unwrap_or(f64::NAN))
    }

    /// dot-mutex, with the zeroing of `c` every launch needs.
    fn time_dot_mutex(
        &mut self,
        device: &mut Device,
        shape: LaunchShape,
        repetitions: u32,
    ) -> Result<f64> {
        let kernel = crate::variant("dot-mutex").kernel;
        let Self {
            a,
            b,
            length,
            c,
            mutex,
        } = self;
        Ok(device
            .time_ms(repetitions, |device| {
                device.clear(c)?;
                device.launch_async(
                    &kernel,
                    shape,
                    &[
                        Arg::from(&*a),
                        Arg::from(&*b),
                        Arg::U32(*length),
                        Arg::from(&*c),
                        Arg::from(&*mutex),
                    ],
                )
            })?
            .unwrap_or(f64::NAN))
    }
}

fn blocks_sweep(
    device: &mut Device,
    inputs: &mut TimingInputs,
    options: &Options,
    page: &mut String,
) -> Result<String> {
    let blocks: Vec<u32> = (4..=14).map(|power| 1u32 << power).collect();
    let bar = progress(blocks.len() as u64, "blocks-per-grid sweep");
    let mut rows = Vec::new();
    let mut mutex_points = Vec::new();
    for &count in &blocks {
        let shape = LaunchShape::linear(count, 256);
        let partial_ms = inputs.time_partial_dot(device, shape, 5, true)?;
        let mutex_ms = inputs.time_dot_mutex(device, shape, 5)?;
        mutex_points.push((f64::from(count), mutex_ms));
        rows.push(vec![
            count.to_string(),
            format!("{partial_ms:.3}"),
            format!("{mutex_ms:.3}"),
            format!("{:.2}", mutex_ms / partial_ms),
        ]);
        bar.inc(1);
    }
    bar.finish_and_clear();
    say(
        page,
        "blocks-per-grid sweep, 256 threads per block: one lock acquisition per block, so the mutex's cost grows with the grid",
    );
    let rendered = table(
        &[
            "blocks",
            "partial-dot + host sum ms",
            "dot-mutex ms",
            "mutex ÷ partial",
        ],
        rows,
    );
    say(page, &rendered);
    let best = mutex_points
        .iter()
        .enumerate()
        .min_by(|x, y| x.1.1.total_cmp(&y.1.1))
        .map_or(0, |(index, _)| index);
    let plot = options.out.join("blocks_sweep.svg");
    sweep_svg(
        &plot,
        "dot-mutex: time against blocks per grid",
        "blocks per grid",
        "ms",
        &mutex_points,
        best,
    )?;
    say(page, &format!("plot: {}", plot.display()));
    Ok(rendered)
}
