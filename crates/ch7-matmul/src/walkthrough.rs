//! `cargo run -p ch7-matmul`: the chapter in teaching order, on whichever backend is chosen.

use std::io::Write;
use std::path::{Path, PathBuf};

use harness::report::table;
use harness::walk::{checker_section, flush, heading, opening, say, selected};
use harness::{Device, HarnessError, LaunchShape, Result, Schedule};

use crate::error_map::write_error_map;
use crate::{
    Ch7Variant, Dims, MatmulCheck, Pipeline, Plan, Step, TILE, VARIANTS, covering_shape,
    element_bound, guard_for, matmul_f64, random_matrix, run_matmul, run_pipeline, tiled_shape,
    variant,
};

/// The walk-through's matrices on the emulator: no side a multiple of TILE, K over two tiles.
pub const EMU_DIMS: Dims = Dims::new(48, 36, 40);
/// Every side a multiple of TILE, where the unchecked tiles happen to be right.
pub const ROUND_DIMS: Dims = Dims::square(48);
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
        match (variant.kind, variant.name) {
            (_, "tiled-no-bounds") => round_then_ragged_step(device, variant, options, &mut page)?,
            (_, "tiled-missing-second-sync") => race_step(device, variant, options, &mut page)?,
            (Step::Pipeline, _) => pipeline_step(device, variant, options, &mut page)?,
            (Step::Naive, _) => {
                let shape = covering_shape(EMU_DIMS, NAIVE_BLOCK);
                one_launch(device, variant, EMU_DIMS, shape, options, &mut page)?;
            }
            (Step::Tiled, _) => {
                let shape = tiled_shape(EMU_DIMS);
                one_launch(device, variant, EMU_DIMS, shape, options, &mut page)?;
            }
        }
        flush(&mut page, out)?;
    }
    if options.variant.is_none() {
        say(&mut page, "");
        timing_section(device, options, &mut page, out)?;
        flush(&mut page, out)?;
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
            "skipped on the emulator: it models a schedule of warps, not time, and runs streams one after another; run with --backend cuda on an NVIDIA GPU for GFLOP/s, the pipeline against one stream, and a copy of the same bytes as the yardstick",
        );
        return Ok(());
    }
    let side = options.timing_side;
    let dims = Dims::square(side);
    dims.validate()?;
    let (a, b) = inputs(dims, options.seed);
    say(
        page,
        &format!(
            "{dims} · each GPU result checked first on {SAMPLED_ELEMENTS} sampled elements against f64 dot products, under their bound"
        ),
    );
    flush(page, out)?;

    let repetitions = 10;
    let a_buffer = device.upload(&a, "A")?;
    let b_buffer = device.upload(&b, "B")?;
    let c_buffer = device.zeros::<f32>(dims.c_len(), "C")?;
    let mut rows: Vec<(String, f64)> = Vec::new();
    for (name, block) in [("naive", NAIVE_BLOCK), ("tiled", (TILE, TILE))] {
        let kernel = variant(name).kernel;
        let shape = covering_shape(dims, block);
        let args = [
            harness::Arg::from(&a_buffer),
            harness::Arg::from(&b_buffer),
            harness::Arg::from(&c_buffer),
            dims.m.into(),
            dims.n.into(),
            dims.k.into(),
        ];
        device.launch(&kernel, shape, &args)?;
        check_sampled(&device.download(&c_buffer)?, &a, &b, dims, name)?;
        let ms = device
            .time_ms(repetitions, |device| {
                device.launch_async(&kernel, shape, &args)
            })?
            .unwrap_or(f64::NAN);
        rows.push((format!("kernel {name} ({shape})"), ms));
    }
    drop((a_buffer, c_buffer));

    let pipeline_variant = variant("pipeline");
    let one_stream = Plan {
        chunks: 1,
        streams: 1,
    };
    let serial_chunks = Plan {
        chunks: options.plan.chunks,
        streams: 1,
    };
    let mut pipeline_ms = Vec::new();
    for plan in [one_stream, serial_chunks, options.plan] {
        let mut pipeline = Pipeline::new(device, &a, &b, dims, plan)?;
        pipeline.run(device, pipeline_variant)?;
        check_sampled(&pipeline.result(device)?, &a, &b, dims, "pipeline")?;
        let ms = device
            .time_ms(repetitions, |device| {
                pipeline.run(device, pipeline_variant).map(drop)
            })?
            .unwrap_or(f64::NAN);
        pipeline_ms.push(ms);
        rows.push((format!("copy A in, multiply, copy C out: {plan}"), ms));
    }
    drop(b_buffer);
    let bytes = 4 * (dims.a_len() + dims.b_len() + dims.c_len());
    let copy_ms = device
        .time_device_copy_ms(bytes, repetitions)?
        .ok_or_else(|| HarnessError::Invalid("the device copy could not be timed".into()))?;
    rows.push((
        format!("device-to-device copy of A, B and C ({bytes} bytes)"),
        copy_ms,
    ));
    let gflops = |ms: f64| dims.flops() / (ms / 1e3) / 1e9;
    let table_rows = rows.iter().enumerate().map(|(index, (name, ms))| {
        let is_copy = index + 1 == rows.len();
        vec![
            name.clone(),
            format!("{ms:.3}"),
            if is_copy {
                "—".to_string()
            } else {
                format!("{:.0}", gflops(*ms))
            },
            format!("{:.2}", ms / copy_ms),
        ]
    });
    say(
        page,
        &table(&["what", "ms", "GFLOP/s", "time ÷ copy time"], table_rows),
    );
    if let [single, serial, overlapped] = pipeline_ms[..] {
        say(
            page,
            &format!(
                "the pipeline ({}) takes {:.2}× the time of the same chunks on one stream and {:.2}× that of one chunk on one stream",
                options.plan,
                overlapped / serial,
                overlapped / single
            ),
        );
    }
    say(
        page,
        "ms: mean of 10 runs after a warm-up, CUDA events; GFLOP/s counts 2·M·N·K; the pipeline rows include moving A in and C out through page-locked host memory (B stays on the device); the copy moves as many bytes as A, B and C hold, in the same run",
    );
    Ok(())
}

/// The timing runs are too large for a full CPU reference, so a spread of elements is
/// checked against f64 dot products under the same bound as everywhere else.
fn check_sampled(c: &[f32], a: &[f32], b: &[f32], dims: Dims, name: &str) -> Result<()> {
    let (m, n, k) = (dims.m as usize, dims.n as usize, dims.k as usize);
    let total = m * n;
    for sample in 0..SAMPLED_ELEMENTS.min(total) {
        let index = (sample * 7919 + sample * sample) % total;
        let (i, j) = (index / n, index % n);
        let (mut want, mut scale) = (0.0f64, 0.0f64);
        for p in 0..k {
            let term = f64::from(a[i * k + p]) * f64::from(b[p * n + j]);
            want += term;
            scale += term.abs();
        }
        let error = (f64::from(c[index]) - want).abs();
        if error > element_bound(dims.k, scale) {
            return Err(HarnessError::Invalid(format!(
                "{name} is wrong on the timing input: C[{i}][{j}] is {} where the CPU has {want}",
                c[index]
            )));
        }
    }
    Ok(())
}
