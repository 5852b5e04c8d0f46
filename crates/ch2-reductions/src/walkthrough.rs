//! `cargo run -p ch2-reductions`: the chapter in teaching order, on whichever backend is chosen.

use std::io::Write;
use std::path::PathBuf;
use std::time::Instant;

use harness::rand::Rng;
use harness::report::{climb_svg, table, write_gpu_markdown, write_gpu_table};
use harness::walk::{
    adversarial_seed, checker_section, flush, heading, opening, say, selected, timing_skipped,
    with_progress,
};
use harness::{Device, Expect, HarnessError, LaunchShape, Result, Schedule};

use crate::{
    BLOB_PIXEL_BOUND, Ch2Variant, ReduceBuffers, Step, SumCheck, VARIANTS, abs_sum_f64,
    blobs_reference, blobs_shape, depth_1d, depth_2d, enqueue_1d, finishing_shape, image,
    launch_1d, pixel_matches, run_blobs, run_reduce_1d, run_reduce_2d, shape_2d, sum_2d_f64,
    sum_f64,
};

/// 1D input on the emulator: a prime, so no block or grid divides it.
pub const EMU_SIZE: usize = 100_003;
/// 1D input on a GPU: 2²⁸ floats (1 GiB); as a matrix, 16384 × 16384.
pub const GPU_SIZE: usize = 1 << 28;
/// Largest `--size`: the kernels' indices are 32-bit.
pub const MAX_SIZE: usize = crate::MAX_ELEMENTS;
/// The blobs image, on either backend: 12 × 12 tiles.
pub const BLOBS_SIZE: (u32, u32) = (192, 192);
/// Timed launches per row of the GPU table, after one warm-up.
pub const REPETITIONS: u32 = 10;
/// Threads per block of the climb's kernels on a grid sized to the GPU.
pub const GPU_SIZED_THREADS: u32 = 1024;
/// The climb of "How fast can it go": where it starts, then its rungs in order.
pub const CLIMB: [&str; 5] = [
    "two-loads-tree",
    "warp-shuffle",
    "float4-loads",
    "gpu-sized-grid",
    "one-launch",
];

#[derive(Debug, Clone)]
pub struct Options {
    pub seed: u64,
    pub variant: Option<String>,
    /// Floats of the 1D input; the 2D input is the largest square matrix that fits in them.
    pub size: usize,
    pub blobs: (u32, u32),
    pub out: PathBuf,
}

impl Options {
    /// Defaults for the backend: small inputs on the emulator, 1 GiB on a GPU.
    pub fn new(seed: u64, out: PathBuf, is_cuda: bool) -> Self {
        Self {
            seed,
            variant: None,
            size: if is_cuda { GPU_SIZE } else { EMU_SIZE },
            blobs: BLOBS_SIZE,
            out,
        }
    }

    /// Rows and columns of the 2D input: a square of ⌊√size⌋ (16384 for 2²⁸).
    pub fn matrix(&self) -> (usize, usize) {
        let side = self.size.isqrt();
        (side, side)
    }
}

/// Launch shapes: enough blocks to fill a GPU there, a few on the emulator.
#[derive(Debug, Clone, Copy)]
struct Shapes {
    linear: LaunchShape,
    square: LaunchShape,
    non_square: LaunchShape,
}

impl Shapes {
    fn for_device(device: &Device) -> Self {
        let grid = if device.kind().is_cuda() { 64 } else { 4 };
        Self {
            linear: LaunchShape::linear(if device.kind().is_cuda() { 1024 } else { 16 }, 256),
            square: shape_2d((grid, grid), (32, 8)),
            non_square: shape_2d((grid * 2, grid / 2), (32, 8)),
        }
    }

    /// The launch of a 1D variant: the chapter's grid, or for the climb's last rungs as many
    /// blocks of [`GPU_SIZED_THREADS`] as the GPU keeps resident (the emulator has no
    /// multiprocessors to fill, so there they keep the chapter's grid).
    fn for_1d(self, device: &mut Device, variant: &Ch2Variant) -> Result<LaunchShape> {
        if !variant.kind.sized_to_the_gpu() {
            return Ok(self.linear);
        }
        Ok(
            match device.resident_blocks(&variant.kernel, GPU_SIZED_THREADS, 0)? {
                Some(blocks) => LaunchShape::linear(blocks, GPU_SIZED_THREADS),
                None => self.linear,
            },
        )
    }
}

/// The inputs every step shares, generated once from the seed.
struct Inputs {
    x: Vec<f32>,
    want: f64,
    abs_sum: f64,
    rows: usize,
    cols: usize,
    want_2d: f64,
    abs_sum_2d: f64,
}

impl Inputs {
    fn new(options: &Options) -> Self {
        let mut rng = harness::cli::seeded_rng(options.seed);
        let x: Vec<f32> = (0..options.size)
            .map(|_| rng.random_range(0.0f32..1.0))
            .collect();
        let (rows, cols) = options.matrix();
        let matrix = &x[..rows * cols];
        Self {
            want: sum_f64(&x),
            abs_sum: abs_sum_f64(&x),
            want_2d: sum_2d_f64(matrix, rows, cols),
            abs_sum_2d: abs_sum_f64(matrix),
            x,
            rows,
            cols,
        }
    }

    fn matrix(&self) -> &[f32] {
        &self.x[..self.rows * self.cols]
    }
}

/// `--size` within what the kernels can index.
pub fn check_size(size: usize) -> Result<()> {
    harness::cli::check_size(size, MAX_SIZE, "floats (the kernels' indices are 32-bit)")
}

/// Writes the walk-through to `out`; images go to `options.out`.
pub fn walkthrough(device: &mut Device, options: &Options, out: &mut dyn Write) -> Result<()> {
    check_size(options.size)?;
    let inputs = Inputs::new(options);
    let mut page = String::new();
    opening(
        &mut page,
        device,
        &[
            &format!(
                "seed {} · 1D input {} floats in [0, 1) · 2D input the first {} × {} of them · blobs {} × {} pixels · images in {}",
                options.seed,
                options.size,
                inputs.rows,
                inputs.cols,
                options.blobs.0,
                options.blobs.1,
                options.out.display()
            ),
            "each sum is checked against an f64 reference: error ≤ γ_d · Σ|x|, d the longest chain of f32 additions behind it",
        ],
        &options.out,
        out,
    )?;

    let shapes = Shapes::for_device(device);
    for (number, variant) in selected(VARIANTS, options.variant.as_deref())? {
        heading(&mut page, number, variant);
        if let Err(refused) = device.ensure_can_run(variant) {
            say(&mut page, &format!("not run: {refused}"));
            say(
                &mut page,
                "run with --backend emu to see synccheck name the line",
            );
            flush(&mut page, out)?;
            continue;
        }
        let page = &mut page;
        with_progress(&format!("{number}. {}", variant.name), |_| {
            match variant.kind {
                Step::Reduce2d => step_2d(device, variant, &inputs, shapes, page),
                Step::Blobs => step_blobs(device, variant, options, page),
                _ => {
                    let shape = shapes.for_1d(device, variant)?;
                    step_1d(device, variant, &inputs, shape, options, page)
                }
            }
        })?;
        flush(page, out)?;
    }
    if options.variant.is_none() {
        say(&mut page, "");
        timing_section(device, &inputs, shapes, options, &mut page)?;
        flush(&mut page, out)?;
    }
    Ok(())
}

fn step_1d(
    device: &mut Device,
    variant: &Ch2Variant,
    inputs: &Inputs,
    shape: LaunchShape,
    options: &Options,
    page: &mut String,
) -> Result<()> {
    let finish = match variant.kind {
        Step::OneLaunch => format!(
            "one launch: the last of the {} blocks to finish adds the block sums",
            shape.grid.x
        ),
        Step::AtomicFinish => format!(
            "one launch: each of the {} blocks adds its sum to the total with atomicAdd, in the order they finish",
            shape.grid.x
        ),
        step if step.finishes_on_the_device() => format!(
            "then the same kernel on the {} block sums with one block of {} threads",
            shape.grid.x,
            finishing_shape(shape).block.x
        ),
        _ => format!("then the host adds the {} block sums", shape.grid.x),
    };
    say(page, &format!("{shape}, {finish}"));
    if variant.kind.sized_to_the_gpu() && !device.kind().is_cuda() {
        say(
            page,
            &format!(
                "(on a GPU: as many blocks of {GPU_SIZED_THREADS} threads as its multiprocessors keep resident at once)"
            ),
        );
    }
    let outcome = run_reduce_1d(device, variant, &inputs.x, shape)?;
    let depth = depth_1d(variant.kind, inputs.x.len(), shape);
    say(
        page,
        &SumCheck::new(outcome.result, inputs.want, depth, inputs.abs_sum).to_string(),
    );
    if variant.expect == Expect::Race
        && let Some(seed) = adversarial_seed(device, options.seed)
    {
        let racy = device.with_schedule(Schedule::Adversarial { seed }, |device| {
            run_reduce_1d(device, variant, &inputs.x, shape)
        })?;
        say(
            page,
            &format!(
                "under the adversarial schedule (seed {seed}), where a warp runs ahead to its next barrier:"
            ),
        );
        say(
            page,
            &SumCheck::new(racy.result, inputs.want, depth, inputs.abs_sum).to_string(),
        );
    }
    checker_section(device, variant, &outcome.report.findings, page);
    Ok(())
}

fn step_2d(
    device: &mut Device,
    variant: &Ch2Variant,
    inputs: &Inputs,
    shapes: Shapes,
    page: &mut String,
) -> Result<()> {
    let mut shown = vec![shapes.square];
    if variant.expect == Expect::WrongResult {
        shown.push(shapes.non_square);
    }
    let mut findings = Vec::new();
    for shape in shown {
        let outcome = run_reduce_2d(
            device,
            variant,
            inputs.matrix(),
            inputs.rows,
            inputs.cols,
            shape,
        )?;
        let depth = depth_2d(inputs.rows, inputs.cols, shape);
        let check = SumCheck::new(outcome.result, inputs.want_2d, depth, inputs.abs_sum_2d);
        say(
            page,
            &format!(
                "{} × {} matrix, {shape}, then the host adds the {} block sums",
                inputs.rows,
                inputs.cols,
                shape.grid.product()
            ),
        );
        say(page, &check.to_string());
        if variant.expect == Expect::WrongResult && !check.is_within() {
            say(
                page,
                &format!(
                    "off by {:.1}% of the sum: with gridDim.x ≠ gridDim.y one axis strides too short and counts elements twice, the other too far and skips them",
                    100.0 * (f64::from(check.got) - check.want) / check.want
                ),
            );
        }
        findings.extend(outcome.report.findings);
    }
    checker_section(device, variant, &findings, page);
    Ok(())
}

fn step_blobs(
    device: &mut Device,
    variant: &Ch2Variant,
    options: &Options,
    page: &mut String,
) -> Result<()> {
    let (width, height) = options.blobs;
    let want = blobs_reference(width, height);
    say(
        page,
        &format!("{width} × {height} pixels, {}", blobs_shape(width, height)),
    );
    let outcome = run_blobs(device, variant, width, height)?;
    say(page, &describe_image(&outcome.result, &want));
    let file = if variant.expect.is_correct() {
        "blobs.png"
    } else {
        "blobs_racy.png"
    };
    let mut shown = outcome.result.clone();
    if variant.expect == Expect::Race
        && let Some(seed) = adversarial_seed(device, options.seed)
    {
        let racy = device.with_schedule(Schedule::Adversarial { seed }, |device| {
            run_blobs(device, variant, width, height)
        })?;
        say(
            page,
            &format!(
                "under the adversarial schedule (seed {seed}), where a warp runs ahead to its next barrier:"
            ),
        );
        say(page, &describe_image(&racy.result, &want));
        shown = racy.result;
    }
    let path = options.out.join(file);
    image::write_png(&path, &shown, width, height)?;
    say(page, &format!("image: {}", path.display()));
    if variant.expect == Expect::Race {
        let fixed = run_blobs(device, crate::variant("blobs"), width, height)?;
        let pair = options.out.join("blobs_side_by_side.png");
        image::write_side_by_side_png(&pair, &fixed.result, &shown, width, height)?;
        say(
            page,
            &format!(
                "side by side, with the barrier and without: {} (red: a value outside [0, 1], read before it was written)",
                pair.display()
            ),
        );
    }
    checker_section(device, variant, &outcome.report.findings, page);
    Ok(())
}

fn describe_image(got: &[f32], want: &[f64]) -> String {
    let wrong = got
        .iter()
        .zip(want)
        .filter(|&(&g, &w)| !pixel_matches(g, w))
        .count();
    let garbage = got
        .iter()
        .filter(|&&g| !(g.is_finite() && (0.0..=1.0).contains(&g)))
        .count();
    if wrong == 0 {
        format!(
            "✓ all {} pixels within {BLOB_PIXEL_BOUND:.1e} of the CPU",
            want.len()
        )
    } else {
        format!(
            "✗ {wrong} of {} pixels differ from the CPU ({garbage} of them outside [0, 1])",
            want.len()
        )
    }
}

/// One row of the GPU table.
struct Timed {
    what: String,
    ms: f64,
    step: bool,
    /// The variant timed, for the rows of the climb.
    variant: Option<&'static str>,
}

fn timing_section(
    device: &mut Device,
    inputs: &Inputs,
    shapes: Shapes,
    options: &Options,
    page: &mut String,
) -> Result<()> {
    say(page, "## GPU timing");
    if !device.kind().is_cuda() {
        say(
            page,
            &timing_skipped(
                "the table of times, GB/s, the ratio to a device copy and the speedup of each step, and the climb of How fast can it go",
            ),
        );
        return Ok(());
    }
    let n = inputs.x.len();
    let bytes = n * 4;
    say(
        page,
        &format!(
            "input: {n} floats ({bytes} bytes) for the 1D kernels; the first {} × {} of them as a matrix for reduction-2d",
            inputs.rows, inputs.cols
        ),
    );

    let (rows, copy_ms) =
        with_progress("checking and timing", |_| measure(device, inputs, shapes))?;
    let rendered = render(&rows, copy_ms, inputs);
    say(page, &rendered);
    say(
        page,
        &format!(
            "mean of {REPETITIONS} launches after a warm-up (CUDA events); every GPU result above was checked against the CPU first; the copy reads and writes the same bytes in the same run; host additions of block sums are not timed"
        ),
    );
    let how = format!(
        "{n} floats; {REPETITIONS} timed launches after one warm-up, CUDA events; the CPU row on one core of the same host"
    );
    let file = write_gpu_table(
        &options.out,
        device.name(),
        "ch2-reductions --backend cuda",
        &how,
        &rendered,
    )?;
    say(page, &format!("table for the book: {}", file.display()));

    say(page, "");
    say(page, "## How fast can it go");
    let climb = render_climb(&rows, copy_ms, bytes);
    say(page, &climb);
    say(
        page,
        "÷ copy's byte rate: bytes the kernel must move (its input, read once) per second, over the bytes per second of the device copy (read and written) in the same run",
    );
    let file = write_gpu_markdown(
        &options.out.join("climb_table.md"),
        device.name(),
        "ch2-reductions --backend cuda",
        &how,
        &climb,
    )?;
    say(
        page,
        &format!("climb table for the book: {}", file.display()),
    );
    let chart = options.out.join("climb.svg");
    climb_svg(
        &chart,
        &format!("Reduction of {n} floats on {}", device.name()),
        "bytes moved per second ÷ the device copy's",
        &climb_ratios(&rows, copy_ms),
    )?;
    say(page, &format!("bar chart: {}", chart.display()));
    Ok(())
}

/// Checks, then times, every fixed reduction on the whole input: the rows of the GPU table and
/// the copy's milliseconds (NaN where nothing can be timed, i.e. on the emulator).
fn measure(device: &mut Device, inputs: &Inputs, shapes: Shapes) -> Result<(Vec<Timed>, f64)> {
    let n = inputs.x.len();
    let bytes = n * 4;
    let started = Instant::now();
    let cpu = sum_f64(&inputs.x);
    let cpu_ms = started.elapsed().as_secs_f64() * 1e3;

    let x = device.upload(&inputs.x, "x")?;
    let copy_ms = device
        .time_device_copy_ms(bytes, REPETITIONS)?
        .unwrap_or(f64::NAN);

    let mut rows = vec![Timed {
        what: "CPU f64 loop (one core)".to_string(),
        ms: cpu_ms,
        step: false,
        variant: None,
    }];
    let timed_1d = |device: &mut Device, name: &'static str| -> Result<Timed> {
        let variant = crate::variant(name);
        let shape = shapes.for_1d(device, variant)?;
        let mut buffers = ReduceBuffers::new(device, shape.grid.x as usize)?;
        // Checked on the timing input itself before it is timed.
        launch_1d(device, variant, &x, n, shape, &mut buffers)?;
        let got = buffers.result(device, variant.kind, shape)?;
        let check = SumCheck::new(got, cpu, depth_1d(variant.kind, n, shape), inputs.abs_sum);
        if !check.is_within() {
            return Err(HarnessError::Invalid(format!(
                "{name} is wrong on the timing input: {check}"
            )));
        }
        let ms = device
            .time_ms(REPETITIONS, |device| {
                enqueue_1d(device, variant, &x, n, shape, &mut buffers, false).map(drop)
            })?
            .unwrap_or(f64::NAN);
        let one_launch = matches!(variant.kind, Step::OneLaunch | Step::AtomicFinish);
        let launches = if variant.kind.finishes_on_the_device() && !one_launch {
            format!("{shape}, then 1 × {}", finishing_shape(shape).block.x)
        } else {
            shape.to_string()
        };
        Ok(Timed {
            what: format!("GPU {name} ({launches})"),
            ms,
            step: true,
            variant: Some(name),
        })
    };
    for name in ["naive-block-sum", "tree-reduction", "two-loads-tree"] {
        rows.push(timed_1d(device, name)?);
    }
    {
        let variant = crate::variant("reduction-2d");
        let shape = shapes.square;
        let block_sums = device.zeros::<f32>(shape.grid.product() as usize, "block_sums")?;
        let rows_u32 = inputs.rows as u32;
        let cols_u32 = inputs.cols as u32;
        let args = |device: &mut Device, sync: bool| -> Result<()> {
            let args = [
                (&x).into(),
                rows_u32.into(),
                cols_u32.into(),
                (&block_sums).into(),
            ];
            if sync {
                device.launch(&variant.kernel, shape, &args).map(drop)
            } else {
                device.launch_async(&variant.kernel, shape, &args)
            }
        };
        args(device, true)?;
        let sums = device.download(&block_sums)?;
        let got = crate::finish_on_host(&sums[..shape.grid.product() as usize]);
        let check = SumCheck::new(
            got,
            inputs.want_2d,
            depth_2d(inputs.rows, inputs.cols, shape),
            inputs.abs_sum_2d,
        );
        if !check.is_within() {
            return Err(HarnessError::Invalid(format!(
                "reduction-2d is wrong on the timing input: {check}"
            )));
        }
        let ms = device
            .time_ms(REPETITIONS, |device| args(device, false))?
            .unwrap_or(f64::NAN);
        rows.push(Timed {
            what: format!(
                "GPU reduction-2d ({} × {}, {shape})",
                inputs.rows, inputs.cols
            ),
            ms,
            step: true,
            variant: Some("reduction-2d"),
        });
    }
    for name in &CLIMB[1..] {
        rows.push(timed_1d(device, name)?);
    }
    // The chapter's exercise: one-launch with an atomicAdd per block for its last block.
    rows.push(timed_1d(device, "atomic-finish")?);
    rows.push(Timed {
        what: format!("GPU device-to-device copy of the {bytes} bytes"),
        ms: copy_ms,
        step: false,
        variant: None,
    });

    Ok((rows, copy_ms))
}

/// The rows of the climb, in [`CLIMB`] order.
fn climb_rows(rows: &[Timed]) -> Vec<&Timed> {
    CLIMB
        .iter()
        .filter_map(|name| rows.iter().find(|row| row.variant == Some(*name)))
        .collect()
}

/// Each rung's bytes per second over the copy's: a reduction moves its input once, the copy
/// reads and writes it, so the ratio is the copy's time over twice the rung's.
fn byte_rate_ratio(ms: f64, copy_ms: f64) -> f64 {
    copy_ms / (2.0 * ms)
}

fn climb_ratios(rows: &[Timed], copy_ms: f64) -> Vec<(String, f64)> {
    climb_rows(rows)
        .into_iter()
        .filter_map(|row| Some((row.variant?.to_string(), byte_rate_ratio(row.ms, copy_ms))))
        .collect()
}

/// The climb as a table: each rung's time, its input's GB/s, its ratio to the copy's byte rate
/// and its speedup over the rung before.
fn render_climb(rows: &[Timed], copy_ms: f64, bytes: usize) -> String {
    let mut previous: Option<f64> = None;
    let table_rows: Vec<Vec<String>> = climb_rows(rows)
        .into_iter()
        .filter_map(|row| {
            let name = row.variant?;
            let variant = crate::variant(name);
            let step = previous.map_or("—".to_string(), |p| format!("{:.2}×", p / row.ms));
            previous = Some(row.ms);
            Some(vec![
                name.to_string(),
                variant
                    .kernel
                    .path
                    .rsplit('/')
                    .next()
                    .unwrap_or_default()
                    .to_string(),
                format!("{:.3}", row.ms),
                format!("{:.1}", bytes as f64 / 1e9 / (row.ms / 1e3)),
                format!("{:.2}", byte_rate_ratio(row.ms, copy_ms)),
                step,
            ])
        })
        .collect();
    table(
        &[
            "step",
            "kernel",
            "ms",
            "input GB/s",
            "÷ copy's byte rate",
            "step speedup",
        ],
        table_rows,
    )
}

/// The table: time, bandwidth, ratio to the copy, and each step's speedup over the one
/// before and over the first, as in Mark Harris' reduction table.
fn render(rows: &[Timed], copy_ms: f64, inputs: &Inputs) -> String {
    let first_step = rows
        .iter()
        .find(|row| row.step)
        .map_or(f64::NAN, |row| row.ms);
    let mut previous: Option<f64> = None;
    let table_rows: Vec<Vec<String>> = rows
        .iter()
        .map(|row| {
            let row_bytes = if row.what.contains("reduction-2d") {
                (inputs.rows * inputs.cols * 4) as f64
            } else {
                (inputs.x.len() * 4) as f64
            };
            let (step, cumulative) = if row.step {
                let step = previous.map_or("—".to_string(), |p| format!("{:.2}×", p / row.ms));
                previous = Some(row.ms);
                (step, format!("{:.2}×", first_step / row.ms))
            } else {
                (String::new(), String::new())
            };
            vec![
                row.what.clone(),
                format!("{:.3}", row.ms),
                format!("{:.1}", row_bytes / 1e9 / (row.ms / 1e3)),
                format!("{:.2}", row.ms / copy_ms),
                step,
                cumulative,
            ]
        })
        .collect();
    table(
        &[
            "what",
            "ms",
            "input GB/s",
            "time ÷ copy time",
            "step speedup",
            "cumulative",
        ],
        table_rows,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_gpu_input_is_a_16384_square() {
        let options = Options::new(1, PathBuf::from("x"), true);
        assert_eq!(options.size, 1 << 28);
        assert_eq!(options.matrix(), (16_384, 16_384));
        assert_eq!(
            Options::new(1, PathBuf::from("x"), false).matrix(),
            (316, 316)
        );
    }

    /// The GPU table's checks and launches, run on the emulator (which times nothing), so the
    /// cuda path runs the same verified code.
    #[test]
    fn the_timing_rows_are_checked_and_rendered() {
        let mut device = Device::open(harness::BackendChoice::Emu).unwrap();
        let mut options = Options::new(9, PathBuf::from("unused"), false);
        options.size = 5_003;
        let inputs = Inputs::new(&options);
        let shapes = Shapes::for_device(&device);
        let (rows, copy_ms) = measure(&mut device, &inputs, shapes).unwrap();
        assert!(copy_ms.is_nan());
        let names: Vec<&str> = rows.iter().map(|row| row.what.as_str()).collect();
        assert_eq!(rows.len(), 11, "{names:?}");
        assert!(names[3].contains("two-loads-tree") && names[4].contains("reduction-2d"));
        assert!(names[5].contains("warp-shuffle") && names[8].contains("one-launch"));
        assert!(names[9].contains("atomic-finish"), "{names:?}");
        let climb: Vec<&str> = climb_rows(&rows)
            .iter()
            .filter_map(|row| row.variant)
            .collect();
        assert_eq!(climb, CLIMB);

        let timed = |what: &str, ms: f64, step: bool| Timed {
            what: what.to_string(),
            ms,
            step,
            variant: None,
        };
        let rows = [
            timed("CPU", 100.0, false),
            timed("GPU naive", 8.0, true),
            timed("GPU tree", 2.0, true),
            timed("GPU reduction-2d", 1.0, true),
            timed("copy", 2.0, false),
        ];
        let text = render(&rows, 2.0, &inputs);
        let lines: Vec<&str> = text.lines().collect();
        assert!(
            lines[3].contains("| —") && lines[3].contains("1.00×"),
            "{text}"
        );
        assert!(
            lines[4].contains("4.00×") && lines[4].contains("| 1.00 "),
            "{text}"
        );
        assert!(
            lines[5].contains("2.00×") && lines[5].contains("8.00×"),
            "{text}"
        );
    }
}
