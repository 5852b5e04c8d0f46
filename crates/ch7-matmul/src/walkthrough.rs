//! `cargo run -p ch7-matmul`: the chapter in teaching order, on whichever backend is chosen.

use std::io::Write;
use std::path::{Path, PathBuf};

use harness::report::{
    SeriesLabelPosition, grouped_bars_svg_with_legend, progress, table, write_gpu_table,
};
use harness::walk::{checker_section, flush, heading, opening, say, selected, with_progress};
use harness::{Arg, Device, HarnessError, LaunchShape, Result, Schedule, VendorTiming};

use crate::error_map::write_error_map;
use crate::{
    Ch7Variant, Dims, MatmulCheck, Pipeline, Plan, Step, TILE, VARIANTS, covering_shape,
    element_bound, guard_for, matmul_f64, random_matrix, run_matmul, run_pipeline, tiled_2x2_shape,
    tiled_shape, variant,
};

/// The walk-through's matrices on the emulator: no side a multiple of TILE, K over two tiles.
pub const EMU_DIMS: Dims = Dims::new(48, 36, 40);
/// Every side a multiple of TILE, where the unchecked tiles happen to be right.
pub const ROUND_DIMS: Dims = Dims::square(48);
/// The climb's matrices on the emulator: multiples of every climb kernel's tile, two tiles
/// of C wide and several steps along K, so loads, barriers and buffers all cycle.
pub const CLIMB_EMU_DIMS: Dims = Dims::new(256, 128, 48);
/// The naive kernels' block: 16 × 16, like the tiles, so the two differ only in the algorithm.
pub const NAIVE_BLOCK: (u32, u32) = (16, 16);
/// Largest side the timing section accepts: the kernels index with 32-bit unsigned ints.
pub const MAX_TIMING_SIDE: u32 = 16_384;
/// Elements of the timing result checked against f64 dot products (all of C would take the
/// CPU minutes at 4096²).
pub const SAMPLED_ELEMENTS: usize = 1_000;

#[derive(Debug, Clone)]
pub struct Options {
    pub seed: u64,
    pub variant: Option<String>,
    /// Side of the square matrices the GPU timing multiplies.
    pub timing_side: u32,
    pub plan: Plan,
    /// Where the maps of wrong elements go.
    pub out: PathBuf,
}

impl Options {
    pub fn new(seed: u64, out: PathBuf) -> Self {
        Self {
            seed,
            out,
            variant: None,
            timing_side: 4096,
            plan: Plan {
                chunks: 8,
                streams: 4,
            },
        }
    }
}

/// The walk-through's A and B for `dims`.
pub fn inputs(dims: Dims, seed: u64) -> (Vec<f32>, Vec<f32>) {
    (
        random_matrix(dims.a_len(), seed),
        random_matrix(dims.b_len(), seed.wrapping_add(1)),
    )
}

/// Writes the walk-through to `out`.
pub fn walkthrough(device: &mut Device, options: &Options, out: &mut dyn Write) -> Result<()> {
    let mut page = String::new();
    opening(
        &mut page,
        device,
        &[&format!(
            "seed {} · {} (no side a multiple of TILE = {TILE}) · entries uniform in [-1, 1) · maps in {}",
            options.seed,
            EMU_DIMS,
            options.out.display()
        )],
        &options.out,
        out,
    )?;

    for (number, variant) in selected(VARIANTS, options.variant.as_deref())? {
        heading(&mut page, number, variant);
        let page = &mut page;
        with_progress(&format!("{number}. {}", variant.name), |_| {
            step(device, variant, options, page)
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

/// One variant's step of the walk-through.
fn step(
    device: &mut Device,
    variant: &Ch7Variant,
    options: &Options,
    page: &mut String,
) -> Result<()> {
    match (variant.kind, variant.name) {
        (_, "tiled-no-bounds") => round_then_ragged_step(device, variant, options, page)?,
        (_, "tiled-missing-second-sync") => race_step(device, variant, options, page)?,
        (Step::Pipeline, _) => pipeline_step(device, variant, options, page)?,
        (Step::Naive, _) => {
            let shape = covering_shape(EMU_DIMS, NAIVE_BLOCK);
            one_launch(device, variant, EMU_DIMS, shape, options, page)?;
        }
        (Step::Tiled, _) => {
            let shape = tiled_shape(EMU_DIMS);
            one_launch(device, variant, EMU_DIMS, shape, options, page)?;
        }
        (Step::Tiled2x2, _) => {
            let shape = tiled_2x2_shape(EMU_DIMS);
            one_launch(device, variant, EMU_DIMS, shape, options, page)?;
        }
        (Step::Climb(tiling), _) => {
            say(
                page,
                &format!(
                    "one block of {} threads per {} × {} tile of C, {} along K per step; no bounds checks, so M, N and K must be multiples of those",
                    tiling.threads, tiling.tile_m, tiling.tile_n, tiling.tile_k
                ),
            );
            let shape = tiling.shape(CLIMB_EMU_DIMS);
            one_launch(device, variant, CLIMB_EMU_DIMS, shape, options, page)?;
        }
    }
    if options.variant.is_some() && device.kind().is_cuda() {
        profiled_launch(device, variant, options, page)?;
    }
    Ok(())
}

/// One launch, checked against the CPU; broken variants get guard space on a GPU.
fn one_launch(
    device: &mut Device,
    variant: &Ch7Variant,
    dims: Dims,
    shape: LaunchShape,
    options: &Options,
    page: &mut String,
) -> Result<()> {
    let seed = options.seed;
    let (a, b) = inputs(dims, seed);
    let (want, scale) = matmul_f64(&a, &b, dims);
    let guard = guard_space(device, variant, dims, shape);
    let outcome = run_matmul(device, variant, &a, &b, dims, shape, guard)?;
    say(page, &format!("{dims} · {shape}"));
    let check = MatmulCheck::new(&outcome.result, &want, &scale, dims.k);
    say(page, &format!("C: {check}"));
    if !check.is_match() {
        map_of_wrong(&options.out, variant.name, &check, dims, page)?;
    }
    if guard > 0 {
        say(
            page,
            &format!(
                "{} of the {guard} spare floats after C were written by threads outside it",
                outcome.guard_written
            ),
        );
    }
    checker_section(device, variant, &outcome.report.findings, page);
    Ok(())
}

/// With `--variant` on a GPU, one more launch of a timed kernel at `--size`, checked like the
/// timing table's: the launch a profiler such as Nsight Compute (`ncu --launch-skip 1`) reads.
fn profiled_launch(
    device: &mut Device,
    variant: &Ch7Variant,
    options: &Options,
    page: &mut String,
) -> Result<()> {
    if !timed_variants().any(|timed| timed.name == variant.name) {
        return Ok(());
    }
    let dims = Dims::square(options.timing_side);
    dims.validate()?;
    let shape = match timing_shape(variant, dims) {
        Ok(shape) => shape,
        Err(why) => {
            say(page, &format!("no launch at --size {}: {why}", dims.m));
            return Ok(());
        }
    };
    let (a, b) = inputs(dims, options.seed);
    let outcome = run_matmul(device, variant, &a, &b, dims, shape, 0)?;
    check_sampled(&outcome.result, &a, &b, dims, variant.name)?;
    say(
        page,
        &format!(
            "then {dims} · {shape} (the launch to profile): ✓ {SAMPLED_ELEMENTS} sampled elements within their bound"
        ),
    );
    Ok(())
}

/// Writes `<variant>.png`, the elements of C outside their bound, and says where.
fn map_of_wrong(
    out: &Path,
    name: &str,
    check: &MatmulCheck,
    dims: Dims,
    page: &mut String,
) -> Result<()> {
    let path = out.join(format!("{name}.png"));
    write_error_map(&path, &check.wrong, dims.m, dims.n)?;
    say(
        page,
        &format!(
            "map of C: {} (red: outside its bound; lines: the edges of {TILE} × {TILE} tiles)",
            path.display()
        ),
    );
    Ok(())
}

/// On a GPU nothing stops a broken kernel's stray accesses, so they get spare room after each
/// matrix instead of landing in memory that is not theirs; the emulator's memcheck needs the
/// exact sizes to report them.
fn guard_space(device: &Device, variant: &Ch7Variant, dims: Dims, shape: LaunchShape) -> usize {
    if device.kind().is_cuda() && !variant.expect.is_correct() {
        guard_for(dims, shape)
    } else {
        0
    }
}

fn round_then_ragged_step(
    device: &mut Device,
    variant: &Ch7Variant,
    options: &Options,
    page: &mut String,
) -> Result<()> {
    let (a, b) = inputs(ROUND_DIMS, options.seed);
    let (want, scale) = matmul_f64(&a, &b, ROUND_DIMS);
    let shape = tiled_shape(ROUND_DIMS);
    let round = run_matmul(device, variant, &a, &b, ROUND_DIMS, shape, 0)?;
    let check = MatmulCheck::new(&round.result, &want, &scale, ROUND_DIMS.k);
    let clean = if device.kind().is_cuda() {
        ""
    } else if round.report.is_clean() {
        ", and the checkers report nothing"
    } else {
        ", but the checkers report something"
    };
    say(
        page,
        &format!("{ROUND_DIMS} (TILE divides every side): C: {check}{clean}"),
    );
    one_launch(
        device,
        variant,
        EMU_DIMS,
        tiled_shape(EMU_DIMS),
        options,
        page,
    )
}

/// The race needs a schedule that lets a warp run ahead to show in the result; racecheck
/// names it on any schedule.
fn race_step(
    device: &mut Device,
    variant: &Ch7Variant,
    options: &Options,
    page: &mut String,
) -> Result<()> {
    let dims = EMU_DIMS;
    let shape = tiled_shape(dims);
    let (a, b) = inputs(dims, options.seed);
    let (want, scale) = matmul_f64(&a, &b, dims);
    say(page, &format!("{dims} · {shape}"));
    if device.emu_settings().is_none() {
        let outcome = run_matmul(device, variant, &a, &b, dims, shape, 0)?;
        say(
            page,
            &format!(
                "C: {}",
                MatmulCheck::new(&outcome.result, &want, &scale, dims.k)
            ),
        );
        say(
            page,
            "a GPU's warps usually stay close enough that the race does not show in C; the emulator's adversarial schedule makes it show",
        );
        checker_section(device, variant, &[], page);
        return Ok(());
    }
    let mut findings = Vec::new();
    for schedule in [
        Schedule::Hardware,
        Schedule::Adversarial { seed: options.seed },
    ] {
        let outcome = device.with_schedule(schedule, |device| {
            run_matmul(device, variant, &a, &b, dims, shape, 0)
        })?;
        let name = match schedule {
            Schedule::Hardware => "hardware schedule (warps in lockstep)".to_string(),
            _ => format!(
                "adversarial schedule (seed {}: one warp runs ahead to its next barrier)",
                options.seed
            ),
        };
        let check = MatmulCheck::new(&outcome.result, &want, &scale, dims.k);
        say(page, &format!("{name}: C: {check}"));
        if !check.is_match() {
            map_of_wrong(&options.out, variant.name, &check, dims, page)?;
        }
        if findings.is_empty() {
            findings = outcome.report.findings;
        }
    }
    checker_section(device, variant, &findings, page);
    Ok(())
}

fn pipeline_step(
    device: &mut Device,
    variant: &Ch7Variant,
    options: &Options,
    page: &mut String,
) -> Result<()> {
    let dims = EMU_DIMS;
    let (a, b) = inputs(dims, options.seed);
    let (want, scale) = matmul_f64(&a, &b, dims);
    let outcome = run_pipeline(device, variant, &a, &b, dims, options.plan)?;
    say(
        page,
        &format!(
            "{dims} · rows of A and C in {}: each stream copies its chunk of A in, multiplies, copies its chunk of C out; B is uploaded once",
            options.plan
        ),
    );
    say(
        page,
        &format!(
            "C: {}",
            MatmulCheck::new(&outcome.result, &want, &scale, dims.k)
        ),
    );
    if !device.kind().is_cuda() {
        say(
            page,
            "the emulator runs each stream's work as it is queued, one call after another: it shows the pipeline's result, not the overlap of copies and compute",
        );
    }
    checker_section(device, variant, &outcome.report.findings, page);
    Ok(())
}

/// The sides of the square matrices the climb is timed on, besides `--size`.
pub const CLIMB_SIDES: [u32; 4] = [1024, 2048, 4096, 8192];
/// Timed launches per kernel, after one warm-up.
pub const REPETITIONS: u32 = 10;

/// The kernels every GPU table times, in the order of the climb.
pub fn timed_variants() -> impl Iterator<Item = &'static Ch7Variant> {
    VARIANTS
        .iter()
        .filter(|v| v.expect.is_correct() && v.kind != Step::Pipeline)
}

/// The launch each timed kernel gets on `dims`, or why it cannot run there.
fn timing_shape(variant: &Ch7Variant, dims: Dims) -> std::result::Result<LaunchShape, String> {
    match variant.kind {
        Step::Naive => Ok(covering_shape(dims, NAIVE_BLOCK)),
        Step::Tiled | Step::Pipeline => Ok(tiled_shape(dims)),
        Step::Tiled2x2 => Ok(tiled_2x2_shape(dims)),
        Step::Climb(tiling) if tiling.allows(dims) => Ok(tiling.shape(dims)),
        Step::Climb(tiling) => Err(format!(
            "needs sides that are multiples of {}",
            tiling.tile_m.max(tiling.tile_n)
        )),
    }
}

/// One kernel's time on one size, or why there is none.
#[derive(Debug, Clone)]
struct Timed {
    name: String,
    shape: Option<LaunchShape>,
    ms: std::result::Result<f64, String>,
}

/// Every timed kernel and cuBLAS on `dims`, each result checked before it is timed.
fn time_all(device: &mut Device, dims: Dims, seed: u64) -> Result<Vec<Timed>> {
    dims.validate()?;
    let (a, b) = inputs(dims, seed);
    let a_buffer = device.upload(&a, "A")?;
    let b_buffer = device.upload(&b, "B")?;
    let mut c_buffer = device.zeros::<f32>(dims.c_len(), "C")?;
    // Every C comes back into this one array, faulted in once for all the kernels.
    let mut c = vec![0f32; dims.c_len()];
    let mut rows = Vec::new();
    for variant in timed_variants() {
        let shape = match timing_shape(variant, dims) {
            Ok(shape) => shape,
            Err(why) => {
                rows.push(Timed {
                    name: variant.name.to_string(),
                    shape: None,
                    ms: Err(why),
                });
                continue;
            }
        };
        // A kernel that skipped elements would leave the previous kernel's right answers.
        device.clear(&mut c_buffer)?;
        let args = [
            Arg::from(&a_buffer),
            Arg::from(&b_buffer),
            Arg::from(&c_buffer),
            dims.m.into(),
            dims.n.into(),
            dims.k.into(),
        ];
        device.launch(&variant.kernel, shape, &args)?;
        device.download_into(&c_buffer, &mut c)?;
        check_sampled(&c, &a, &b, dims, variant.name)?;
        let ms = device
            .time_ms(REPETITIONS, |device| {
                device.launch_async(&variant.kernel, shape, &args)
            })?
            .unwrap_or(f64::NAN);
        rows.push(Timed {
            name: variant.name.to_string(),
            shape: Some(shape),
            ms: Ok(ms),
        });
    }
    device.clear(&mut c_buffer)?;
    let cublas = device.sgemm_reference_ms(
        &a_buffer,
        &b_buffer,
        &mut c_buffer,
        (dims.m, dims.n, dims.k),
        REPETITIONS,
    )?;
    let ms = match cublas {
        VendorTiming::Ms(ms) => {
            device.download_into(&c_buffer, &mut c)?;
            check_sampled(&c, &a, &b, dims, CUBLAS)?;
            Ok(ms)
        }
        VendorTiming::Unavailable(why) => Err(why),
    };
    rows.push(Timed {
        name: CUBLAS.to_string(),
        shape: None,
        ms,
    });
    Ok(rows)
}

/// The reference row's name.
pub const CUBLAS: &str = "cuBLAS cublasSgemm (FP32)";

fn cublas_ms(rows: &[Timed]) -> Option<f64> {
    rows.iter()
        .find(|row| row.name == CUBLAS)
        .and_then(|row| row.ms.as_ref().ok().copied())
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
            "skipped on the emulator: it models a schedule of warps, not time, and runs streams one after another; run with --backend cuda on an NVIDIA GPU for GFLOP/s against cuBLAS's cublasSgemm, the climb from 1024² to 8192², the pipeline against one stream, and a copy of the same bytes as the yardstick",
        );
        return Ok(());
    }
    let side = options.timing_side;
    let dims = Dims::square(side);
    dims.validate()?;
    say(
        page,
        &format!(
            "{dims} · each GPU result, cuBLAS's too, checked first on {SAMPLED_ELEMENTS} sampled elements against f64 dot products, under their bound"
        ),
    );
    flush(page, out)?;

    let mut sides: Vec<u32> = CLIMB_SIDES.to_vec();
    if !sides.contains(&side) {
        sides.push(side);
        sides.sort_unstable();
    }
    let bar = progress(sides.len() as u64, "timing every kernel and cuBLAS");
    let mut by_side = Vec::new();
    for &climb_side in &sides {
        by_side.push((
            climb_side,
            time_all(device, Dims::square(climb_side), options.seed)?,
        ));
        bar.inc(1);
    }
    bar.finish_and_clear();
    let kernels = by_side
        .iter()
        .find(|(s, _)| *s == side)
        .map(|(_, rows)| rows.clone())
        .unwrap_or_default();

    let (a, b) = inputs(dims, options.seed);
    let pipeline_variant = variant("pipeline");
    let plans = [
        Plan {
            chunks: 1,
            streams: 1,
        },
        Plan {
            chunks: options.plan.chunks,
            streams: 1,
        },
        options.plan,
    ];
    let mut pipeline_ms = Vec::new();
    for plan in plans {
        let mut pipeline = Pipeline::new(device, &a, &b, dims, plan)?;
        pipeline.run(device, pipeline_variant)?;
        check_sampled(&pipeline.result(device)?, &a, &b, dims, "pipeline")?;
        let ms = device
            .time_ms(REPETITIONS, |device| {
                pipeline.run(device, pipeline_variant).map(drop)
            })?
            .unwrap_or(f64::NAN);
        pipeline_ms.push((plan, ms));
    }
    let bytes = 4 * (dims.a_len() + dims.b_len() + dims.c_len());
    let copy_ms = device
        .time_device_copy_ms(bytes, REPETITIONS)?
        .ok_or_else(|| HarnessError::Invalid("the device copy could not be timed".into()))?;

    let main = main_table(dims, &kernels, &pipeline_ms, bytes, copy_ms);
    say(page, &main);
    let pipeline_sentence = if let [(_, single), (_, serial), (plan, overlapped)] = pipeline_ms[..]
    {
        format!(
            "the pipeline ({plan}) takes {:.2}× the time of the same chunks on one stream and {:.2}× that of one chunk on one stream",
            overlapped / serial,
            overlapped / single
        )
    } else {
        String::new()
    };
    say(page, &pipeline_sentence);
    say(
        page,
        &format!(
            "ms: mean of {REPETITIONS} runs after a warm-up, CUDA events; GFLOP/s counts 2·M·N·K; % of cuBLAS is cuBLAS's time over the kernel's, in the same run; the pipeline rows include moving A in and C out through page-locked host memory (B stays on the device); the copy moves as many bytes as A, B and C hold, in the same run"
        ),
    );
    let climb = climb_table(&by_side);
    say(
        page,
        &format!("the climb, GFLOP/s and % of cuBLAS on square matrices:\n{climb}"),
    );
    let chart = options.out.join("climb.svg");
    climb_chart(&chart, device.name(), &by_side)?;
    say(page, &format!("chart: {}", chart.display()));
    let file = write_gpu_table(
        &options.out,
        device.name(),
        "ch7-matmul --backend cuda",
        &format!(
            "A, B and C {side} × {side} f32 in the first table, the pipeline in {}; mean of {REPETITIONS} runs after a warm-up, CUDA events; cuBLAS in the same process",
            options.plan
        ),
        &format!(
            "{main}\n\n{pipeline_sentence}.\n\nThe climb, GFLOP/s and % of cuBLAS on square matrices:\n\n{climb}"
        ),
    )?;
    say(page, &format!("tables for the book: {}", file.display()));
    Ok(())
}

fn gflops(dims: Dims, ms: f64) -> f64 {
    dims.flops() / (ms / 1e3) / 1e9
}

fn percent_of(reference: Option<f64>, ms: f64) -> String {
    reference.map_or_else(|| "—".to_string(), |r| format!("{:.1}%", 100.0 * r / ms))
}

fn main_table(
    dims: Dims,
    kernels: &[Timed],
    pipeline_ms: &[(Plan, f64)],
    bytes: usize,
    copy_ms: f64,
) -> String {
    let reference = cublas_ms(kernels);
    let mut rows: Vec<Vec<String>> = Vec::new();
    for row in kernels {
        let name = match row.shape {
            Some(shape) => format!("kernel {} ({shape})", row.name),
            None if row.name == CUBLAS => row.name.clone(),
            None => format!("kernel {}", row.name),
        };
        rows.push(match &row.ms {
            Ok(ms) => vec![
                name,
                format!("{ms:.3}"),
                format!("{:.0}", gflops(dims, *ms)),
                percent_of(reference, *ms),
                format!("{:.2}", ms / copy_ms),
            ],
            Err(why) => vec![name, why.clone(), "—".into(), "—".into(), "—".into()],
        });
    }
    for (plan, ms) in pipeline_ms {
        rows.push(vec![
            format!("copy A in, multiply, copy C out: {plan}"),
            format!("{ms:.3}"),
            format!("{:.0}", gflops(dims, *ms)),
            percent_of(reference, *ms),
            format!("{:.2}", ms / copy_ms),
        ]);
    }
    rows.push(vec![
        format!("device-to-device copy of A, B and C ({bytes} bytes)"),
        format!("{copy_ms:.3}"),
        "—".into(),
        "—".into(),
        "1.00".into(),
    ]);
    table(
        &["what", "ms", "GFLOP/s", "% of cuBLAS", "time ÷ copy time"],
        rows,
    )
}

fn climb_table(by_side: &[(u32, Vec<Timed>)]) -> String {
    let mut header = vec!["kernel".to_string()];
    for (side, _) in by_side {
        header.push(format!("{side}² GFLOP/s"));
        header.push(format!("{side}² % of cuBLAS"));
    }
    let names: Vec<String> = by_side
        .first()
        .map(|(_, rows)| rows.iter().map(|row| row.name.clone()).collect())
        .unwrap_or_default();
    let rows = names.iter().enumerate().map(|(index, name)| {
        let mut cells = vec![name.clone()];
        for (side, rows) in by_side {
            let reference = cublas_ms(rows);
            match rows.get(index).map(|row| &row.ms) {
                Some(Ok(ms)) => {
                    cells.push(format!("{:.0}", gflops(Dims::square(*side), *ms)));
                    cells.push(percent_of(reference, *ms));
                }
                Some(Err(why)) if name == CUBLAS => {
                    cells.push(why.clone());
                    cells.push("—".into());
                }
                _ => {
                    cells.push("—".into());
                    cells.push("—".into());
                }
            }
        }
        cells
    });
    let header: Vec<&str> = header.iter().map(String::as_str).collect();
    table(&header, rows)
}

/// Bars of % of cuBLAS, one group per kernel, one bar per size.
fn climb_chart(path: &Path, gpu: &str, by_side: &[(u32, Vec<Timed>)]) -> Result<()> {
    let labels: Vec<String> = by_side
        .first()
        .map(|(_, rows)| {
            rows.iter()
                .filter(|row| row.name != CUBLAS)
                .map(|row| row.name.clone())
                .collect()
        })
        .unwrap_or_default();
    let names: Vec<String> = by_side.iter().map(|(side, _)| format!("{side}²")).collect();
    let series: Vec<(&str, Vec<f64>)> = by_side
        .iter()
        .zip(&names)
        .map(|((_, rows), name)| {
            let reference = cublas_ms(rows);
            let percents = rows
                .iter()
                .filter(|row| row.name != CUBLAS)
                .map(|row| match (reference, &row.ms) {
                    (Some(r), Ok(ms)) => 100.0 * r / ms,
                    _ => 0.0,
                })
                .collect();
            (name.as_str(), percents)
        })
        .collect();
    grouped_bars_svg_with_legend(
        path,
        &format!("SGEMM on {gpu}: % of cuBLAS cublasSgemm, same run"),
        &labels,
        &series,
        "% of cuBLAS",
        Some(SeriesLabelPosition::UpperLeft),
    )
}

/// The timing runs are too large for a full CPU reference, so a spread of elements is
/// checked against f64 dot products under the same bound as everywhere else. The samples are
/// checked on every core: each walks a column of B, a cache miss per term at 8192², and the
/// first one outside its bound, in sample order, is the one reported.
fn check_sampled(c: &[f32], a: &[f32], b: &[f32], dims: Dims, name: &str) -> Result<()> {
    use rayon::prelude::*;
    let (m, n, k) = (dims.m as usize, dims.n as usize, dims.k as usize);
    let total = m * n;
    let wrong = (0..SAMPLED_ELEMENTS.min(total))
        .into_par_iter()
        .map(|sample| {
            let index = (sample * 7919 + sample * sample) % total;
            let (i, j) = (index / n, index % n);
            let (mut want, mut scale) = (0.0f64, 0.0f64);
            for p in 0..k {
                let term = f64::from(a[i * k + p]) * f64::from(b[p * n + j]);
                want += term;
                scale += term.abs();
            }
            let error = (f64::from(c[index]) - want).abs();
            (index, want, error > element_bound(dims.k, scale))
        })
        .find_first(|&(_, _, outside)| outside);
    match wrong {
        Some((index, want, _)) => Err(HarnessError::Invalid(format!(
            "{name} is wrong on the timing input: C[{}][{}] is {} where the CPU has {want}",
            index / n,
            index % n,
            c[index]
        ))),
        None => Ok(()),
    }
}
