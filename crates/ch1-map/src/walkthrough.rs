//! `cargo run -p ch1-map`: the chapter in teaching order, on whichever backend is chosen.

use std::io::Write;
use std::path::PathBuf;
use std::time::Instant;

use harness::rand::Rng;
use harness::report::{climb_svg, progress, sweep_svg, table, write_gpu_markdown, write_gpu_table};
use harness::verify::{compare_by_pieces, compare_exact};
use harness::walk::{
    ProgressBar, checker_section, flush, heading, opening, say, selected, timing_skipped,
    with_progress,
};
use harness::{Arg, Buffer, Device, Expect, HarnessError, LaunchShape, Result};

use crate::{
    BinaryOp, Ch1Variant, Coverage, Data, Exponential, Owner, SIGMOID_CLIMB, SigmoidCheck, Step,
    VARIANTS, broadcast_add_cpu, broadcast_shape, covering_shape, elementwise_cpu, exact, floats,
    owner, owners_cpu, run_broadcast_add_2d, run_elementwise, run_saxpy, run_scalar_multiply,
    run_sigmoid, run_thread_ids, same_bits, same_bits_as, saxpy_cpu, scalar_multiply_cpu,
};

/// Elements of the 1D arrays on the emulator: a prime, so no block size divides it.
pub const EMU_SIZE: usize = 10_007;
/// Elements of the steps' 1D arrays on a GPU: the first prime past 2²⁴ (64 MiB an array), so no
/// block size divides it either, and every kernel fills thousands of blocks; small enough that
/// the one-warp grids of the sigmoid steps cover it in a fraction of a second.
pub const GPU_SIZE: usize = 16_777_259;
/// Elements of the timing input on a GPU: 2²⁸ floats, 1 GiB an array, twenty times the L2
/// cache, so every kernel is timed against memory.
pub const GPU_TIMING_SIZE: usize = 1 << 28;
/// Largest `--size`: the kernels' indices are 32-bit.
pub const MAX_SIZE: usize = crate::MAX_ELEMENTS;
/// Threads per block of every one-thread-per-element launch.
pub const THREADS_PER_BLOCK: u32 = 256;
/// The tiny launches that show who handles what.
pub const TINY_ONE_PER_ELEMENT: (usize, LaunchShape) = (10, LaunchShape::linear(3, 4));
pub const TINY_GRID_STRIDE: (usize, LaunchShape) = (19, LaunchShape::linear(2, 4));
/// The broken bounds guard is shown on this many elements: not a multiple of 256.
pub const NO_GUARD_SIZE: usize = 1000;
/// Spare floats after each array when the unguarded kernel runs where its stray writes can land.
pub const SPARE: usize = 256;
/// The broadcast example: rows and columns that no block side divides.
pub const BROADCAST_SIZE: (usize, usize) = (89, 113);
pub const BROADCAST_BLOCK: (u32, u32) = (32, 8);
/// Timed launches per row of the GPU table, after one warm-up.
pub const REPETITIONS: u32 = 10;
/// Most timed launches per point of the blocks-per-grid sweep.
pub const SWEEP_REPETITIONS: u32 = 5;
/// Milliseconds of timed launches a sweep point aims at: a point of one block takes half a
/// second a launch on 2²⁸ floats, so it gets one, while the full grids get all
/// [`SWEEP_REPETITIONS`].
pub const SWEEP_BUDGET_MS: f64 = 200.0;

#[derive(Debug, Clone)]
pub struct Options {
    pub seed: u64,
    pub variant: Option<String>,
    /// Elements of the steps' 1D arrays.
    pub size: usize,
    /// Elements of each array of the GPU timing table, climb and sweep.
    pub timing_size: usize,
    pub out: PathBuf,
}

impl Options {
    /// Defaults for the backend: a small prime on the emulator, a large prime on a GPU, and
    /// 1 GiB arrays for the GPU's timings.
    pub fn new(seed: u64, out: PathBuf, is_cuda: bool) -> Self {
        Self {
            seed,
            variant: None,
            size: if is_cuda { GPU_SIZE } else { EMU_SIZE },
            timing_size: GPU_TIMING_SIZE,
            out,
        }
    }
}

/// The grid the sigmoid's grid-stride loop runs with in its step: a few blocks on the
/// emulator, enough to fill a GPU there.
fn sigmoid_shape(device: &Device) -> LaunchShape {
    if device.kind().is_cuda() {
        LaunchShape::linear(1024, THREADS_PER_BLOCK)
    } else {
        LaunchShape::linear(4, 128)
    }
}

/// The grid each sigmoid variant runs with: the grid-stride loops on [`sigmoid_shape`], except
/// the one that keeps several loads in flight, which gets as many blocks as the GPU holds at
/// once; the one-float4-per-thread kernel on a grid that covers the array.
pub fn climb_shape(device: &mut Device, variant: &Ch1Variant, n: usize) -> Result<LaunchShape> {
    let threads = sigmoid_shape(device).block.x;
    if variant.kind == Step::SigmoidPerThread {
        return Ok(covering_shape(n.div_ceil(4), threads));
    }
    if variant.name == "sigmoid-float4-in-flight"
        && let Some(blocks) = device.resident_blocks(&variant.kernel, threads, 0)?
    {
        return Ok(LaunchShape::linear(blocks, threads));
    }
    Ok(sigmoid_shape(device))
}

/// `--size` within what the kernels can index.
pub fn check_size(size: usize) -> Result<()> {
    harness::cli::check_size(size, MAX_SIZE, "elements (the kernels' indices are 32-bit)")
}

/// `--timing-size` within what the kernels can index.
pub fn check_timing_size(size: usize) -> Result<()> {
    check_size(size).map_err(|_| {
        HarnessError::Invalid(format!(
            "--timing-size {size} is outside 1..={MAX_SIZE} elements (the kernels' indices are 32-bit)"
        ))
    })
}

/// Writes the walk-through to `out`; plots go to `options.out`.
pub fn walkthrough(device: &mut Device, options: &Options, out: &mut dyn Write) -> Result<()> {
    check_size(options.size)?;
    check_timing_size(options.timing_size)?;
    let mut page = String::new();
    opening(
        &mut page,
        device,
        &[
            &format!(
                "seed {} · n = {} floats · {THREADS_PER_BLOCK} threads per block · plots in {}",
                options.seed,
                options.size,
                options.out.display()
            ),
            "element-wise results must equal the CPU's f32 results bit for bit; the sigmoid must lie within a bound derived from expf's documented error",
        ],
        &options.out,
        out,
    )?;

    for (number, variant) in selected(VARIANTS, options.variant.as_deref())? {
        heading(&mut page, number, variant);
        let page = &mut page;
        with_progress(&format!("{number}. {}", variant.name), |_| {
            match (variant.kind, variant.expect) {
                (Step::ThreadIds, _) => thread_ids_step(device, variant, options, page),
                (Step::ScalarMultiply, Expect::OutOfBounds) => {
                    no_guard_step(device, variant, options, page)
                }
                (Step::ScalarMultiply, Expect::WrongResult) => {
                    thread_index_only_step(device, variant, options, page)
                }
                (Step::ScalarMultiply, _) => scalar_step(device, variant, options, page),
                (Step::Elementwise, _) => elementwise_step(device, variant, options, page),
                (Step::Sigmoid | Step::SigmoidPerThread, _) => {
                    sigmoid_step(device, variant, options, page)
                }
                (Step::BroadcastAdd2d, _) => broadcast_step(device, variant, options, page),
                (Step::Saxpy, _) => saxpy_step(device, variant, options, page),
            }
        })?;
        flush(page, out)?;
    }
    if options.variant.is_none() {
        say(&mut page, "");
        let timed = timing_section(device, options, &mut page, out)?;
        flush(&mut page, out)?;
        say(&mut page, "");
        climb_section(device, options, timed.as_ref(), &mut page)?;
        flush(&mut page, out)?;
    }
    Ok(())
}

/// `a` for `y = a · x`, drawn from the seed.
fn scalar(seed: u64) -> f32 {
    let mut rng = harness::cli::seeded_rng(seed ^ 0x5ca1a);
    (rng.random_range(-4.0f32..4.0) * 8.0).round() / 8.0 + 0.125
}

fn thread_ids_step(
    device: &mut Device,
    variant: &Ch1Variant,
    options: &Options,
    page: &mut String,
) -> Result<()> {
    let mut findings = Vec::new();

    let (n, shape) = TINY_ONE_PER_ELEMENT;
    say(
        page,
        &format!(
            "one thread per element: {shape} over n = {n} elements, i = blockIdx.x · blockDim.x + threadIdx.x"
        ),
    );
    let outcome = run_thread_ids(device, Coverage::OnePerElement, n, shape)?;
    let columns: Vec<String> = std::iter::once("element".to_string())
        .chain((0..n).map(|i| i.to_string()))
        .collect();
    let header: Vec<&str> = columns.iter().map(String::as_str).collect();
    let row = |label: &str, pick: fn(&Owner) -> u32| {
        std::iter::once(label.to_string())
            .chain(outcome.result.iter().map(|o| pick(o).to_string()))
            .collect::<Vec<_>>()
    };
    say(
        page,
        &table(
            &header,
            [
                row("blockIdx.x", |o| o.block),
                row("threadIdx.x", |o| o.thread),
            ],
        ),
    );
    let idle: Vec<String> = (n..shape.total_threads() as usize)
        .map(|i| crate::owner(i, shape).to_string())
        .collect();
    say(
        page,
        &format!(
            "{} threads for {n} elements: {} (i ≥ {n}) fail the if (i < n) and do nothing",
            shape.total_threads(),
            idle.join(" and ")
        ),
    );
    say(
        page,
        &format!("{}", compare_exact(&outcome.result, &owners_cpu(n, shape))),
    );
    findings.extend(outcome.report.findings);

    let (n, shape) = TINY_GRID_STRIDE;
    let stride = shape.total_threads() as usize;
    say(page, "");
    say(
        page,
        &format!(
            "grid-stride loop: {shape} = {stride} threads over n = {n} elements; each thread steps by blockDim.x · gridDim.x = {stride}"
        ),
    );
    let outcome = run_thread_ids(device, Coverage::GridStride, n, shape)?;
    say(page, &grid_stride_table(&outcome.result, shape));
    say(
        page,
        &format!("{}", compare_exact(&outcome.result, &owners_cpu(n, shape))),
    );
    findings.extend(outcome.report.findings);

    say(page, "");
    let n = options.size;
    for (coverage, shape) in [
        (
            Coverage::OnePerElement,
            covering_shape(n, THREADS_PER_BLOCK),
        ),
        (Coverage::GridStride, sigmoid_shape(device)),
    ] {
        let outcome = run_thread_ids(device, coverage, n, shape)?;
        let what = match coverage {
            Coverage::OnePerElement => "one per element",
            Coverage::GridStride => "grid-stride",
        };
        // The owners of each piece of the array, on every core: `owners_cpu` a piece at a time.
        let comparison = compare_by_pieces(
            &outcome.result,
            n,
            |range| range.map(|i| owner(i, shape)).collect(),
            |_, got, want| got == want,
        );
        say(page, &format!("n = {n}, {what}, {shape}: {comparison}"));
        findings.extend(outcome.report.findings);
    }
    checker_section(device, variant, &findings, page);
    Ok(())
}

/// Elements by thread (columns) and pass of the loop (rows), from what the kernel recorded.
fn grid_stride_table(owners: &[Owner], shape: LaunchShape) -> String {
    let threads = shape.total_threads() as usize;
    let threads_per_block = shape.block.x as usize;
    let mut passes: Vec<Vec<String>> = Vec::new();
    let mut handled = vec![0usize; threads];
    for (element, owner) in owners.iter().enumerate() {
        let column = owner.block as usize * threads_per_block + owner.thread as usize;
        let Some(count) = handled.get_mut(column) else {
            continue;
        };
        if passes.len() <= *count {
            passes.push(vec!["·".to_string(); threads]);
        }
        passes[*count][column] = element.to_string();
        *count += 1;
    }
    let columns: Vec<String> = std::iter::once(String::new())
        .chain(
            (0..threads).map(|t| format!("b{} t{}", t / threads_per_block, t % threads_per_block)),
        )
        .collect();
    let header: Vec<&str> = columns.iter().map(String::as_str).collect();
    let rows = passes.into_iter().enumerate().map(|(pass, cells)| {
        std::iter::once(format!("pass {pass}"))
            .chain(cells)
            .collect::<Vec<_>>()
    });
    table(&header, rows)
}

fn scalar_step(
    device: &mut Device,
    variant: &Ch1Variant,
    options: &Options,
    page: &mut String,
) -> Result<()> {
    let n = options.size;
    let a = scalar(options.seed);
    let x = floats(n, Data::Mixed, options.seed);
    let shape = covering_shape(n, THREADS_PER_BLOCK);
    say(
        page,
        &format!("y = a · x with a = {a}, x: {n} floats {}", Data::Mixed),
    );
    say(
        page,
        &format!(
            "{shape} = ceil({n} / {THREADS_PER_BLOCK}) blocks: {} threads, the last {} past the end",
            shape.total_threads(),
            shape.total_threads() - n as u64
        ),
    );
    let outcome = run_scalar_multiply(device, variant, &x, a, shape, 0)?;
    say(
        page,
        &same_bits_as(&outcome.result, n, |range| {
            scalar_multiply_cpu(&x[range], a)
        })
        .to_string(),
    );
    checker_section(device, variant, &outcome.report.findings, page);
    Ok(())
}

fn no_guard_step(
    device: &mut Device,
    variant: &Ch1Variant,
    options: &Options,
    page: &mut String,
) -> Result<()> {
    let n = NO_GUARD_SIZE;
    let a = scalar(options.seed);
    let x = floats(n, Data::Unit, options.seed);
    let want = exact(&scalar_multiply_cpu(&x, a));
    let shape = covering_shape(n, THREADS_PER_BLOCK);
    let stray = shape.total_threads() as usize - n;
    say(
        page,
        &format!("n = {n}, {shape}: {stray} threads have i ≥ {n}, and nothing stops them"),
    );
    let mut findings = Vec::new();
    if !device.kind().is_cuda() {
        let outcome = run_scalar_multiply(device, variant, &x, a, shape, 0)?;
        say(
            page,
            &format!(
                "x and y of exactly {n} floats: y {}",
                compare_exact(&exact(&outcome.result), &want)
            ),
        );
        findings = outcome.report.findings;
    }
    checker_section(device, variant, &findings, page);

    let spared = run_scalar_multiply(device, variant, &x, a, shape, SPARE)?;
    let (inside, past_end) = spared.result.split_at(n);
    let written: Vec<usize> = past_end
        .iter()
        .enumerate()
        .filter(|(_, value)| !value.is_nan())
        .map(|(offset, _)| n + offset)
        .collect();
    say(
        page,
        &format!(
            "with {SPARE} spare floats after x (set to 1) and after y (set to NaN): y {}",
            compare_exact(&exact(inside), &want)
        ),
    );
    match (written.first(), written.last()) {
        (Some(first), Some(last)) => say(
            page,
            &format!(
                "and the launch wrote {} floats past the end of y: y[{first}..={last}] = a · 1 = {}",
                written.len(),
                past_end[first - n]
            ),
        ),
        _ => say(page, "and nothing was written past the end of y"),
    }
    say(
        page,
        "the values are right: the stray reads and writes are the bug, and without spare floats they land in whatever memory follows the arrays",
    );

    let multiple = n.next_multiple_of(THREADS_PER_BLOCK as usize);
    let x = floats(multiple, Data::Unit, options.seed);
    let shape = covering_shape(multiple, THREADS_PER_BLOCK);
    let outcome = run_scalar_multiply(device, variant, &x, a, shape, 0)?;
    let comparison = compare_exact(&exact(&outcome.result), &exact(&scalar_multiply_cpu(&x, a)));
    let checkers = if device.kind().is_cuda() {
        String::new()
    } else if outcome.report.is_clean() {
        ", and the checkers report nothing".to_string()
    } else {
        let count = outcome.report.findings.len();
        let s = if count == 1 { "" } else { "s" };
        format!(", and {count} checker finding{s}")
    };
    say(
        page,
        &format!(
            "n = {multiple}, a multiple of {THREADS_PER_BLOCK}, {shape}: no thread is past the end: y {comparison}{checkers}"
        ),
    );
    Ok(())
}

fn thread_index_only_step(
    device: &mut Device,
    variant: &Ch1Variant,
    options: &Options,
    page: &mut String,
) -> Result<()> {
    let a = scalar(options.seed);
    let small = (THREADS_PER_BLOCK as usize * 3) / 4;
    let x = floats(small, Data::Unit, options.seed);
    let shape = covering_shape(small, THREADS_PER_BLOCK);
    let outcome = run_scalar_multiply(device, variant, &x, a, shape, 0)?;
    say(
        page,
        &format!(
            "n = {small}, {shape}: y {} — with one block, threadIdx.x is the global index",
            compare_exact(&exact(&outcome.result), &exact(&scalar_multiply_cpu(&x, a)))
        ),
    );

    let n = options.size;
    let x = floats(n, Data::Unit, options.seed);
    let shape = covering_shape(n, THREADS_PER_BLOCK);
    let outcome = run_scalar_multiply(device, variant, &x, a, shape, 0)?;
    let comparison = same_bits_as(&outcome.result, n, |range| {
        scalar_multiply_cpu(&x[range], a)
    });
    say(page, &format!("n = {n}, {shape}: y {comparison}"));
    let untouched = outcome.result.iter().filter(|v| v.is_nan()).count();
    say(
        page,
        &format!(
            "all {} blocks wrote y[0..{THREADS_PER_BLOCK}]; {untouched} elements still hold the NaN y started as",
            shape.grid.x
        ),
    );
    checker_section(device, variant, &outcome.report.findings, page);
    if !outcome.report.is_clean() {
        say(
            page,
            "the race is the symptom: threads of different blocks write the same y[i] because i ignores blockIdx.x",
        );
    }
    Ok(())
}

fn elementwise_step(
    device: &mut Device,
    variant: &Ch1Variant,
    options: &Options,
    page: &mut String,
) -> Result<()> {
    let n = options.size;
    let a = floats(n, Data::Mixed, options.seed.wrapping_add(1));
    let b = floats(n, Data::Mixed, options.seed.wrapping_add(2));
    let shape = covering_shape(n, THREADS_PER_BLOCK);
    say(
        page,
        &format!("a, b: {n} floats each, {}; {shape}", Data::Mixed),
    );
    let mut findings = Vec::new();
    for op in BinaryOp::ALL {
        let outcome = run_elementwise(device, op, &a, &b, shape)?;
        let comparison = same_bits_as(&outcome.result, n, |range| {
            elementwise_cpu(op, &a[range.clone()], &b[range])
        });
        let special = outcome
            .result
            .iter()
            .filter(|v| !v.is_normal() && **v != 0.0)
            .count();
        say(
            page,
            &format!(
                "{:<16} c = a {} b: {comparison} ({special} of them NaN, ±∞ or subnormal)",
                op.entry(),
                op.symbol()
            ),
        );
        findings.extend(outcome.report.findings);
    }
    checker_section(device, variant, &findings, page);
    Ok(())
}

/// The saxpy against the fused reference, and how many of its results the twice-rounded
/// `a * x + y` would have called wrong.
fn saxpy_step(
    device: &mut Device,
    variant: &Ch1Variant,
    options: &Options,
    page: &mut String,
) -> Result<()> {
    let n = options.size;
    let a = scalar(options.seed);
    let x = floats(n, Data::Unit, options.seed.wrapping_add(1));
    let y = floats(n, Data::Unit, options.seed.wrapping_add(2));
    let shape = covering_shape(n, THREADS_PER_BLOCK);
    say(
        page,
        &format!(
            "y = a · x + y with a = {a}, x and y: {n} floats {}; {shape}",
            Data::Unit
        ),
    );
    let outcome = run_saxpy(device, variant, a, &x, &y, shape)?;
    let fused = same_bits_as(&outcome.result, n, |range| {
        saxpy_cpu(a, &x[range.clone()], &y[range])
    });
    say(page, &format!("against a.mul_add(x, y): {fused}"));
    let rounded_twice = same_bits_as(&outcome.result, n, |range| {
        x[range.clone()]
            .iter()
            .zip(&y[range])
            .map(|(&x, &y)| a * x + y)
            .collect()
    });
    say(
        page,
        &format!(
            "against a * x + y, rounded twice: {} of {n} differ in the last bits (one rounding is not two)",
            rounded_twice.mismatch_count
        ),
    );
    checker_section(device, variant, &outcome.report.findings, page);
    Ok(())
}

fn sigmoid_step(
    device: &mut Device,
    variant: &Ch1Variant,
    options: &Options,
    page: &mut String,
) -> Result<()> {
    let n = options.size;
    let x = floats(n, Data::Wide, options.seed);
    let shape = climb_shape(device, variant, n)?;
    let threads = shape.total_threads() as usize;
    say(page, &format!("x: {n} floats {}", Data::Wide));
    let per_thread = variant.kind == Step::SigmoidPerThread;
    if per_thread {
        say(
            page,
            &format!(
                "{shape} = {threads} threads for {n} elements: thread i takes elements 4i .. 4i + 3{}",
                remainder(n, &format!(", thread {} the last", n / 4))
            ),
        );
    } else if variant.kernel.source.contains("float4") {
        let quads = n / 4;
        say(
            page,
            &format!(
                "{shape} = {threads} threads for {n} elements: each thread handles {} or {} float4s of four elements{}",
                quads / threads,
                quads.div_ceil(threads),
                remainder(
                    n,
                    &format!(", and the first {} threads one each of the last", n % 4)
                )
            ),
        );
    } else {
        say(
            page,
            &format!(
                "{shape} = {threads} threads for {n} elements: each thread handles {} or {}",
                n / threads,
                n.div_ceil(threads)
            ),
        );
    }
    let outcome = run_sigmoid(device, variant, &x, shape)?;
    let exponential = Exponential::of(variant);
    say(
        page,
        &SigmoidCheck::with(exponential, &x, &outcome.result).to_string(),
    );
    let mut findings = outcome.report.findings;
    let grids = if per_thread {
        let quads = n.div_ceil(4);
        [
            covering_shape(quads, 32),
            covering_shape(quads, 96),
            LaunchShape::linear(covering_shape(quads, 1024).grid.x + 1, 1024),
        ]
    } else {
        [
            LaunchShape::linear(1, 32),
            LaunchShape::linear(7, 96),
            covering_shape(n, THREADS_PER_BLOCK),
        ]
    };
    let mut same = Vec::new();
    for grid in grids {
        let other = run_sigmoid(device, variant, &x, grid)?;
        let identical = same_bits(&other.result, &outcome.result).is_match();
        same.push(format!("{grid} {}", if identical { "✓" } else { "✗" }));
        findings.extend(other.report.findings);
    }
    say(
        page,
        &format!("the same bits from other grids: {}", same.join(" · ")),
    );
    checker_section(device, variant, &findings, page);
    Ok(())
}

/// "`lead` k elements" for the k = n % 4 elements no float4 holds, or that there are none.
fn remainder(n: usize, lead: &str) -> String {
    match n % 4 {
        0 => format!(" ({n} is a multiple of 4: no element is left over)"),
        1 => format!("{lead} element"),
        left => format!("{lead} {left} elements"),
    }
}

fn broadcast_step(
    device: &mut Device,
    variant: &Ch1Variant,
    options: &Options,
    page: &mut String,
) -> Result<()> {
    let col = [0.0f32, 10.0, 20.0];
    let row = [1.0f32, 2.0, 3.0, 4.0];
    let block = (2, 2);
    say(
        page,
        &format!(
            "col = {col:?} (3 × 1), row = {row:?} (1 × 4), {}:",
            broadcast_shape(col.len(), row.len(), block)
        ),
    );
    let outcome = run_broadcast_add_2d(device, variant, &col, &row, block)?;
    let header = ["out", "c = 0", "c = 1", "c = 2", "c = 3"];
    let rows = outcome
        .result
        .chunks(row.len())
        .enumerate()
        .map(|(r, values)| {
            std::iter::once(format!("r = {r}"))
                .chain(values.iter().map(|v| v.to_string()))
                .collect::<Vec<_>>()
        });
    say(page, &table(&header, rows));
    say(
        page,
        &compare_exact(
            &exact(&outcome.result),
            &exact(&broadcast_add_cpu(&col, &row)),
        )
        .to_string(),
    );
    let mut findings = outcome.report.findings;

    let (rows, cols) = BROADCAST_SIZE;
    let col = floats(rows, Data::Mixed, options.seed.wrapping_add(3));
    let row = floats(cols, Data::Mixed, options.seed.wrapping_add(4));
    let shape = broadcast_shape(rows, cols, BROADCAST_BLOCK);
    let outcome = run_broadcast_add_2d(device, variant, &col, &row, BROADCAST_BLOCK)?;
    say(
        page,
        &format!(
            "{rows} × {cols}, col and row {}, {shape}: {}",
            Data::Mixed,
            compare_exact(
                &exact(&outcome.result),
                &exact(&broadcast_add_cpu(&col, &row))
            )
        ),
    );
    findings.extend(outcome.report.findings);
    checker_section(device, variant, &findings, page);
    Ok(())
}

/// One row of the GPU table: what, milliseconds, bytes read and written, and which variant
/// it times, for the climb that reads the same measurements.
#[derive(Debug)]
struct Timed {
    what: String,
    ms: f64,
    bytes: f64,
    variant: Option<&'static str>,
    shape: Option<LaunchShape>,
}

/// The timing section's rows and the copy they are compared with, measured in one run.
struct Measured {
    rows: Vec<Timed>,
    copy: Timed,
}

fn timing_section(
    device: &mut Device,
    options: &Options,
    page: &mut String,
    out: &mut dyn Write,
) -> Result<Option<Measured>> {
    say(page, "## GPU timing");
    if !device.kind().is_cuda() {
        say(
            page,
            &timing_skipped(
                "each kernel's bandwidth against a device-to-device copy and the blocks-per-grid sweep of the grid-stride loop",
            ),
        );
        return Ok(None);
    }
    let n = options.timing_size;
    say(
        page,
        &format!("input: {n} floats ({} bytes) per array", 4 * n),
    );
    flush(page, out)?;
    let (rows, copy, input) =
        with_progress("checking and timing", |line| measure(device, options, line))?;
    let rendered = render(&rows, &copy);
    say(page, &rendered);
    say(
        page,
        &format!(
            "mean of {REPETITIONS} launches after a warm-up (CUDA events); every GPU result was checked against the CPU first; bytes moved = bytes read + bytes written"
        ),
    );
    flush(page, out)?;

    let (sweep, best) = blocks_sweep(device, &input)?;
    drop(input);
    let sweep_rows = sweep.iter().enumerate().map(|(index, point)| {
        let (blocks, ms) = (point.blocks, point.ms);
        let per_thread = (n as f64 / (blocks * f64::from(THREADS_PER_BLOCK))).ceil();
        vec![
            format!("{blocks:.0}"),
            format!("{per_thread:.0}"),
            format!("{ms:.3}"),
            point.launches.to_string(),
            format!("{:.1}", 8.0 * n as f64 / 1e9 / (ms / 1e3)),
            if index == best {
                "← fastest".to_string()
            } else {
                String::new()
            },
        ]
    });
    let sweep_table = table(
        &[
            "blocks",
            "elements per thread",
            "ms",
            "timed launches",
            "GB/s",
            "",
        ],
        sweep_rows,
    );
    let sweep_how = format!(
        "mean of up to {SWEEP_REPETITIONS} launches after a warm-up, as many as fit in {SWEEP_BUDGET_MS:.0} ms; a launch that takes longer is timed once, its warm-up the measurement"
    );
    say(
        page,
        &format!(
            "blocks-per-grid sweep of sigmoid-grid-stride, {THREADS_PER_BLOCK} threads per block, on the same input ({sweep_how}):"
        ),
    );
    say(page, &sweep_table);
    let plot = options.out.join("blocks_sweep.svg");
    let points: Vec<(f64, f64)> = sweep.iter().map(|point| (point.blocks, point.ms)).collect();
    sweep_svg(
        &plot,
        "sigmoid-grid-stride: time against blocks per grid",
        "blocks per grid",
        "ms",
        &points,
        best,
    )?;
    say(page, &format!("plot: {}", plot.display()));

    let file = write_gpu_table(
        &options.out,
        device.name(),
        "ch1-map --backend cuda",
        &format!(
            "{n} floats per array; {REPETITIONS} timed launches after one warm-up, CUDA events; the CPU row on one core of the same host"
        ),
        &format!(
            "{rendered}\n\nBlocks-per-grid sweep of `sigmoid-grid-stride`, {THREADS_PER_BLOCK} threads per block, same input, {sweep_how}:\n\n{sweep_table}"
        ),
    )?;
    say(page, &format!("tables for the book: {}", file.display()));
    Ok(Some(Measured { rows, copy }))
}

/// The sigmoid's climb to the copy's byte rate: the timing section's own measurements of the
/// climb's variants, as a table and a bar chart.
fn climb_section(
    device: &Device,
    options: &Options,
    measured: Option<&Measured>,
    page: &mut String,
) -> Result<()> {
    say(page, "## Climb — how fast can it go");
    let Some(Measured { rows, copy }) = measured else {
        say(
            page,
            &timing_skipped(
                "the sigmoid's climb, each step's byte rate as a fraction of the copy's, with a bar chart",
            ),
        );
        return Ok(());
    };
    let copy_rate = copy.bytes / copy.ms;
    let steps: Vec<(&Ch1Variant, &Timed)> = SIGMOID_CLIMB
        .iter()
        .filter_map(|&name| {
            let row = rows.iter().find(|row| row.variant == Some(name))?;
            Some((crate::variant(name), row))
        })
        .collect();
    let table_rows = steps.iter().map(|(variant, row)| {
        let rate = row.bytes / row.ms;
        vec![
            file_number(variant),
            variant.name.to_string(),
            row.shape.map(|shape| shape.to_string()).unwrap_or_default(),
            format!("{:.3}", row.ms),
            format!("{:.1}", rate / 1e6),
            format!("{:.2}", rate / copy_rate),
        ]
    });
    let climb = table(
        &["step", "variant", "launch", "ms", "GB/s", "÷ copy's GB/s"],
        table_rows,
    );
    say(
        page,
        &format!(
            "{} floats in, {} out; the copy: {:.3} ms, {:.1} GB/s",
            options.timing_size,
            options.timing_size,
            copy.ms,
            copy_rate / 1e6
        ),
    );
    say(page, &climb);
    let plot = options.out.join("climb.svg");
    let bars: Vec<(String, f64)> = steps
        .iter()
        .map(|(variant, row)| {
            (
                format!("{} {}", file_number(variant), variant.name),
                row.bytes / row.ms / copy_rate,
            )
        })
        .collect();
    climb_svg(
        &plot,
        &format!("sigmoid on {}", device.name()),
        "÷ the device copy's byte rate, same run",
        &bars,
    )?;
    say(page, &format!("plot: {}", plot.display()));
    let file = write_gpu_markdown(
        &options.out.join("climb_table.md"),
        device.name(),
        "ch1-map --backend cuda",
        &format!(
            "{} floats in and out; {REPETITIONS} timed launches after one warm-up, CUDA events; the ratio is to a device-to-device copy of the same bytes timed in the same run, {:.1} GB/s",
            options.timing_size,
            copy_rate / 1e6
        ),
        &climb,
    )?;
    say(page, &format!("climb for the book: {}", file.display()));
    Ok(())
}

/// The `NN` of a variant's kernel file, `kernels/ch1_map/NN_….cu`.
fn file_number(variant: &Ch1Variant) -> String {
    let file = variant.kernel.path.rsplit('/').next().unwrap_or_default();
    file.split('_').next().unwrap_or_default().to_string()
}

/// The timing input left on the device for the blocks-per-grid sweep: the sigmoid's input
/// `x` and room for its output.
struct TimingInput {
    x: Buffer<f32>,
    y: Buffer<f32>,
}

/// Checks, then times, every fixed map on `options.timing_size` floats: the table's rows, the
/// copy, and the input for the sweep. `line` says which row is under way.
fn measure(
    device: &mut Device,
    options: &Options,
    line: &ProgressBar,
) -> Result<(Vec<Timed>, Timed, TimingInput)> {
    let n = options.timing_size;
    let length = n as u32;
    let float_bytes = 4.0 * n as f64;
    line.set_message(format!("drawing and uploading {n} floats twice"));
    let a_host = floats(n, Data::Mixed, options.seed.wrapping_add(1));
    let b_host = floats(n, Data::Mixed, options.seed.wrapping_add(2));
    let mut rows = Vec::new();

    let a = device.upload(&a_host, "a")?;
    let b = device.upload(&b_host, "b")?;
    let mut c = device.zeros::<f32>(n, "c")?;
    // Every result comes back into this one array: a GiB faulted in once, not once a row.
    let mut got = vec![0f32; n];
    let copy_ms = device
        .time_device_copy_ms(4 * n, REPETITIONS)?
        .unwrap_or(f64::NAN);
    let copy = Timed {
        what: format!("GPU device-to-device copy of {} bytes", 4 * n),
        ms: copy_ms,
        bytes: 2.0 * float_bytes,
        variant: None,
        shape: None,
    };
    let one_per_element = covering_shape(n, THREADS_PER_BLOCK);
    let mut checked = Checked {
        device,
        got: &mut got,
        line,
    };

    let scalar_multiply = crate::variant("scalar-multiply");
    let factor = scalar(options.seed);
    let args = [
        Arg::from(&a),
        Arg::F32(factor),
        Arg::from(&c),
        Arg::U32(length),
    ];
    rows.push(checked.check_and_time(
        scalar_multiply.kernel,
        one_per_element,
        &args,
        &c,
        |got| same_bits_as(got, n, |range| scalar_multiply_cpu(&a_host[range], factor)).is_match(),
        format!("GPU scalar-multiply ({one_per_element})"),
        2.0 * float_bytes,
    )?);

    for op in BinaryOp::ALL {
        let args = [
            Arg::from(&a),
            Arg::from(&b),
            Arg::from(&c),
            Arg::U32(length),
        ];
        // The CPU row: the reference itself on one core, timed once; it then checks the add.
        let cpu_add = (op == BinaryOp::Add).then(|| {
            checked
                .line
                .set_message("CPU c = a + b on one core, the CPU row");
            let started = Instant::now();
            let want = elementwise_cpu(op, &a_host, &b_host);
            (want, started.elapsed().as_secs_f64() * 1e3)
        });
        if let Some((_, ms)) = &cpu_add {
            rows.insert(
                0,
                Timed {
                    what: "CPU c = a + b, an iterator over both arrays (one core)".to_string(),
                    ms: *ms,
                    bytes: 3.0 * float_bytes,
                    variant: None,
                    shape: None,
                },
            );
        }
        rows.push(checked.check_and_time(
            op.kernel(),
            one_per_element,
            &args,
            &c,
            |got| {
                match &cpu_add {
                    Some((want, _)) => same_bits(got, want).is_match(),
                    None => same_bits_as(got, n, |range| {
                        elementwise_cpu(op, &a_host[range.clone()], &b_host[range])
                    })
                    .is_match(),
                }
            },
            format!("GPU {} ({one_per_element})", op.entry()),
            3.0 * float_bytes,
        )?);
    }

    // The chapter's exercise: a map with two inputs, y read and written.
    let saxpy = crate::variant("saxpy");
    let y = checked.device.upload(&b_host, "y")?;
    let args = [
        Arg::F32(factor),
        Arg::from(&a),
        Arg::from(&y),
        Arg::U32(length),
    ];
    // Checked on one launch from y's first values; the timed launches then update y again and
    // again, which costs the same.
    rows.push(checked.check_and_time(
        saxpy.kernel,
        one_per_element,
        &args,
        &y,
        |got| {
            same_bits_as(got, n, |range| {
                saxpy_cpu(factor, &a_host[range.clone()], &b_host[range])
            })
            .is_match()
        },
        format!("GPU saxpy ({one_per_element})"),
        3.0 * float_bytes,
    )?);
    drop(y);

    for name in SIGMOID_CLIMB {
        let sigmoid = crate::variant(name);
        let shape = climb_shape(checked.device, sigmoid, n)?;
        // Each step starts from zeros, so one that misses elements cannot pass on the last one's.
        checked.device.clear(&mut c)?;
        let args = [Arg::from(&a), Arg::from(&c), Arg::U32(length)];
        let exponential = Exponential::of(sigmoid);
        let mut row = checked.check_and_time(
            sigmoid.kernel,
            shape,
            &args,
            &c,
            |got| SigmoidCheck::with(exponential, &a_host, got).is_within(),
            format!("GPU {name} ({shape})"),
            2.0 * float_bytes,
        )?;
        row.variant = Some(sigmoid.name);
        row.shape = Some(shape);
        rows.push(row);
    }

    let side = n.isqrt();
    let broadcast = crate::variant("broadcast-add-2d");
    let shape = broadcast_shape(side, side, BROADCAST_BLOCK);
    let col_host = &a_host[..side];
    let row_host = &b_host[..side];
    let col = checked.device.upload(col_host, "col")?;
    let row = checked.device.upload(row_host, "row")?;
    let side_u32 = side as u32;
    let args = [
        Arg::from(&col),
        Arg::from(&row),
        Arg::from(&c),
        Arg::U32(side_u32),
        Arg::U32(side_u32),
    ];
    rows.push(checked.check_and_time(
        broadcast.kernel,
        shape,
        &args,
        &c,
        |got| {
            // `broadcast_add_cpu` on the rows a piece spans, then the piece of them.
            same_bits_as(&got[..side * side], side * side, |range| {
                let first_row = range.start / side;
                let rows =
                    broadcast_add_cpu(&col_host[first_row..range.end.div_ceil(side)], row_host);
                let offset = first_row * side;
                rows[range.start - offset..range.end - offset].to_vec()
            })
            .is_match()
        },
        format!("GPU broadcast-add-2d ({side} × {side}, {shape})"),
        4.0 * (side * side + 2 * side) as f64,
    )?);
    drop((col, row, b));
    Ok((rows, copy, TimingInput { x: a, y: c }))
}

/// The device, the host array every result comes back into, and the progress line, for
/// [`Checked::check_and_time`].
struct Checked<'a> {
    device: &'a mut Device,
    got: &'a mut Vec<f32>,
    line: &'a ProgressBar,
}

impl Checked<'_> {
    /// Launches once and checks the output with `is_right`, then times `REPETITIONS` launches.
    #[allow(clippy::too_many_arguments)]
    fn check_and_time(
        &mut self,
        kernel: harness::KernelSource,
        shape: LaunchShape,
        args: &[Arg<'_>],
        output: &Buffer<f32>,
        is_right: impl Fn(&[f32]) -> bool,
        what: String,
        bytes: f64,
    ) -> Result<Timed> {
        self.line
            .set_message(format!("checking, then timing {what}"));
        let device = &mut *self.device;
        device.launch(&kernel, shape, args)?;
        let got = &mut self.got[..output.len()];
        device.download_into(output, got)?;
        if !is_right(got) {
            return Err(HarnessError::Invalid(format!(
                "{} is wrong on the timing input",
                kernel.entry
            )));
        }
        let ms = device
            .time_ms(REPETITIONS, |device| {
                device.launch_async(&kernel, shape, args)
            })?
            .unwrap_or(f64::NAN);
        Ok(Timed {
            what,
            ms,
            bytes,
            variant: None,
            shape: None,
        })
    }
}

fn render(rows: &[Timed], copy: &Timed) -> String {
    let copy_rate = copy.bytes / copy.ms;
    let table_rows = rows.iter().chain(std::iter::once(copy)).map(|row| {
        let rate = row.bytes / row.ms;
        vec![
            row.what.clone(),
            format!("{:.3}", row.ms),
            format!("{:.2}", row.bytes / 1e9),
            format!("{:.1}", rate / 1e6),
            format!("{:.2}", rate / copy_rate),
        ]
    });
    table(
        &["what", "ms", "GB moved", "effective GB/s", "÷ copy's GB/s"],
        table_rows,
    )
}

/// One point of the blocks-per-grid sweep.
#[derive(Debug, Clone, Copy)]
struct SweepPoint {
    blocks: f64,
    ms: f64,
    /// Timed launches the mean is over.
    launches: u32,
}

/// Milliseconds of the sigmoid's grid-stride loop over the timing input for 1, 2, 4, … blocks
/// up to one thread per element, and the index of the fastest. Its result is the one the
/// timing table checked for this input; the sweep only times it.
fn blocks_sweep(device: &mut Device, input: &TimingInput) -> Result<(Vec<SweepPoint>, usize)> {
    let n = input.x.len();
    let length = n as u32;
    let kernel = crate::variant("sigmoid-grid-stride").kernel;
    let most = covering_shape(n, THREADS_PER_BLOCK).grid.x;
    let mut blocks = Vec::new();
    let mut count = 1u32;
    while count < most {
        blocks.push(count);
        count = count.saturating_mul(2);
    }
    blocks.push(most);
    let bar = progress(blocks.len() as u64, "blocks-per-grid sweep");
    let mut points = Vec::new();
    for &count in &blocks {
        let shape = LaunchShape::linear(count, THREADS_PER_BLOCK);
        let timing = device.time_within(SWEEP_REPETITIONS, SWEEP_BUDGET_MS, |device| {
            device.launch_async(
                &kernel,
                shape,
                &[Arg::from(&input.x), Arg::from(&input.y), Arg::U32(length)],
            )
        })?;
        points.push(SweepPoint {
            blocks: f64::from(count),
            ms: timing.map_or(f64::NAN, |timing| timing.ms),
            launches: timing.map_or(0, |timing| timing.calls),
        });
        bar.inc(1);
    }
    bar.finish_and_clear();
    let best = points
        .iter()
        .enumerate()
        .min_by(|a, b| a.1.ms.total_cmp(&b.1.ms))
        .map_or(0, |(index, _)| index);
    Ok((points, best))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The GPU table's checks and launches, run on the emulator (which times nothing), so the
    /// cuda path runs the same verified code.
    #[test]
    fn the_timing_rows_are_checked_and_rendered() {
        let mut device = Device::open(harness::BackendChoice::Emu).unwrap();
        let mut options = Options::new(9, PathBuf::from("unused"), false);
        options.timing_size = 5_003;
        let (rows, copy, _) = measure(&mut device, &options, &ProgressBar::hidden()).unwrap();
        assert!(copy.ms.is_nan());
        let names: Vec<&str> = rows.iter().map(|row| row.what.as_str()).collect();
        assert_eq!(rows.len(), 13, "{names:?}");
        assert!(names[0].starts_with("CPU"), "{names:?}");
        assert!(names[2].contains("elementwise_add") && names[5].contains("elementwise_div"));
        assert!(names[6].contains("saxpy"), "{names:?}");
        let climb: Vec<_> = rows.iter().filter_map(|row| row.variant).collect();
        assert_eq!(climb, SIGMOID_CLIMB);
        assert!(
            names[11].contains("sigmoid-float4-per-thread (10 blocks × 128 threads)"),
            "{names:?}"
        );
        assert!(names[12].contains("broadcast-add-2d (70 × 70"), "{names:?}");
        assert_eq!(rows[6].bytes, 12.0 * 5_003.0);
        assert_eq!(rows[1].bytes, 8.0 * 5_003.0);
        assert_eq!(rows[2].bytes, 12.0 * 5_003.0);

        let timed = |what: &str, ms: f64, bytes: f64| Timed {
            what: what.to_string(),
            ms,
            bytes,
            variant: None,
            shape: None,
        };
        let text = render(&[timed("GPU add", 3.0, 3e9)], &timed("copy", 1.0, 2e9));
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 4, "{text}");
        assert!(
            lines[2].contains("| 3.000 ")
                && lines[2].contains("| 1000.0 ")
                && lines[2].contains("| 0.50 "),
            "{text}"
        );
        assert!(
            lines[3].contains("| 2000.0 ") && lines[3].contains("| 1.00 "),
            "{text}"
        );
    }

    #[test]
    fn the_sweep_doubles_the_grid_up_to_one_thread_per_element() {
        let mut device = Device::open(harness::BackendChoice::Emu).unwrap();
        let input = TimingInput {
            x: device.upload(&floats(5_003, Data::Unit, 9), "x").unwrap(),
            y: device.zeros(5_003, "y").unwrap(),
        };
        let (points, best) = blocks_sweep(&mut device, &input).unwrap();
        let blocks: Vec<f64> = points.iter().map(|point| point.blocks).collect();
        assert_eq!(blocks, [1.0, 2.0, 4.0, 8.0, 16.0, 20.0]);
        assert!(best < points.len());
    }
}
