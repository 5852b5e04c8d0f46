//! `cargo run -p ch6-scans`: the chapter in teaching order, on whichever backend is chosen.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Instant;

use harness::rand::Rng;
use harness::report::{climb_svg, table, write_gpu_markdown, write_gpu_table};
use harness::verify::{bounds, compare_exact, compare_within};
use harness::walk::{
    ProgressBar, adversarial_seed, checker_section, flush, heading, opening, say, selected,
    timing_skipped, with_progress,
};
use harness::{Buffer, Device, Expect, HarnessError, Result, Schedule};
use plotters::prelude::*;

use crate::{
    CLIMB_THREADS, Ch6Variant, DEFAULT_THREADS, LargeScanKernels, Step, TileScanBuffers, VARIANTS,
    blelloch_counted, default_one_block_threads, exclusive_abs_sums, exclusive_scan,
    exclusive_scan_f64, exclusive_scan_on_every_core, hillis_steele_counted, inclusive_scan,
    large_scan_depth, large_scan_enqueue, large_scan_launch_count, large_scan_levels,
    large_scan_sums, multi_launch_sweeps, padded_len, run_convert, run_grid_inclusive,
    run_large_scan, run_multi_launch, run_one_block, run_tile_scan, strides, tile_count,
    tile_items, tile_scan_enqueue, up_sweep_bank_conflicts, up_sweep_levels,
};

/// Default elements of the GPU timing input: 2²⁸ `unsigned int`s, 1 GiB.
pub const DEFAULT_TIMING_ELEMENTS: u64 = 1 << 28;
/// Largest timing input: the kernels index with 32-bit integers and pad to a power of two.
pub const MAX_TIMING_ELEMENTS: u64 = 1 << 30;
/// The seed used for the adversarial schedule in the race demonstration.
pub const ADVERSARIAL_SEED: u64 = 7;
/// Elements of the up-sweep diagram.
pub const DIAGRAM_LEN: usize = 16;
/// The climb of "How fast can it go": where it starts, then its rungs in order.
pub const CLIMB: [&str; 7] = [
    "large-array-scan",
    "reduce-then-scan",
    "coalesced-stores",
    "chained-scan",
    "decoupled-lookback",
    "warp-lookback",
    "bigger-tiles",
];
/// Timed runs per row of the GPU table, after one warm-up.
pub const REPETITIONS: u32 = 10;

#[derive(Debug, Clone)]
pub struct Options {
    pub seed: u64,
    pub variant: Option<String>,
    /// Elements of the GPU timing input.
    pub timing_elements: u64,
    pub out: PathBuf,
}

impl Options {
    pub fn new(seed: u64, out: PathBuf) -> Self {
        Self {
            seed,
            variant: None,
            timing_elements: DEFAULT_TIMING_ELEMENTS,
            out,
        }
    }
}

/// Input sizes: small on the emulator, so the walk-through takes seconds there.
struct Sizes {
    multi_launch: usize,
    large_u32: usize,
    large_f32: usize,
    convert: usize,
    climb: usize,
    climb_threads: u32,
}

impl Sizes {
    fn for_device(device: &Device) -> Self {
        if device.kind().is_cuda() {
            Self {
                multi_launch: 1_000_003,
                large_u32: 10_000_019,
                large_f32: 10_000_019,
                convert: 10_000_019,
                climb: DEFAULT_TIMING_ELEMENTS as usize,
                climb_threads: CLIMB_THREADS,
            }
        } else {
            Self {
                multi_launch: 5_003,
                large_u32: 30_011,
                large_f32: 10_007,
                convert: 5_003,
                // tiles of 512: 79 of them, so a warp's look-back window of 32 moves twice
                // (bigger-tiles: 53 tiles of 768, so it moves once)
                climb: 40_009,
                climb_threads: 32,
            }
        }
    }
}

/// Values small enough to read, random enough to matter: 0..10.
fn small_values(n: usize, rng: &mut impl Rng) -> Vec<u32> {
    (0..n).map(|_| rng.random_range(0..10)).collect()
}

/// The GPU's timing input, drawn, scanned on the CPU and uploaded once: the climb's steps and
/// the timing table all scan these same 2²⁸ values, so the steps show what is timed and none of
/// it is made twice.
struct TimingInput {
    /// [`small_values`] from the seed, drawn on every core.
    values: Vec<u32>,
    /// Their exclusive scan, on every core.
    want: Vec<u32>,
    on_device: Buffer<u32>,
    /// Where each kernel writes its scan.
    out: Buffer<u32>,
    /// The host array each scan comes back into: a GiB faulted in once, not once a kernel.
    got: Vec<u32>,
}

impl TimingInput {
    /// The input, made on first use.
    fn get<'a>(
        slot: &'a mut Option<Self>,
        device: &mut Device,
        options: &Options,
        line: &ProgressBar,
    ) -> Result<&'a mut Self> {
        if let Some(input) = slot {
            return Ok(input);
        }
        let n = timing_elements(options);
        line.set_message(format!(
            "drawing {n} values, scanning them on the CPU, uploading them"
        ));
        let values = harness::cli::seeded_values(n, options.seed, |rng| rng.random_range(0..10));
        let want = exclusive_scan_on_every_core(&values);
        let on_device = device.upload(&values, "in")?;
        let out = device.zeros::<u32>(n, "out")?;
        Ok(slot.insert(Self {
            values,
            want,
            on_device,
            out,
            got: vec![0; n],
        }))
    }

    /// Scans the input with one of the climb's kernels, from an output of zeros (so a kernel
    /// that skips elements cannot pass on the last one's), and compares with the CPU's scan.
    fn scan_with(
        &mut self,
        device: &mut Device,
        variant: &Ch6Variant,
        threads: u32,
    ) -> Result<(harness::verify::Comparison<u32>, u32)> {
        device.ensure_can_run(variant)?;
        device.clear(&mut self.out)?;
        // Sized to this rung's tiles, so a single pass zeroes exactly the status it uses.
        let tiles = tile_count(variant, self.values.len(), threads);
        let mut buffers = TileScanBuffers::new(device, tiles)?;
        let (_, launches) = tile_scan_enqueue(
            device,
            variant,
            &self.on_device,
            &self.out,
            threads,
            &mut buffers,
            true,
        )?;
        device.download_into(&self.out, &mut self.got)?;
        Ok((compare_exact(&self.got, &self.want), launches))
    }
}

/// Elements of the GPU timing input, within what the kernels take.
fn timing_elements(options: &Options) -> usize {
    options.timing_elements.clamp(1, MAX_TIMING_ELEMENTS) as usize
}

/// Writes the walk-through to `out`; the diagram goes to `options.out`.
pub fn walkthrough(device: &mut Device, options: &Options, out: &mut dyn Write) -> Result<()> {
    let mut page = String::new();
    opening(
        &mut page,
        device,
        &[&format!(
            "seed {} · values 0..10 as unsigned int (exact), f32 in [-1, 1) for the float scan · images in {}",
            options.seed,
            options.out.display()
        )],
        &options.out,
        out,
    )?;

    let sizes = Sizes::for_device(device);
    let mut timing_input = None;
    for (number, variant) in selected(VARIANTS, options.variant.as_deref())? {
        heading(&mut page, number, variant);
        let mut rng = harness::cli::seeded_rng(options.seed.wrapping_add(number as u64));
        let (rng, page, timing_input) = (&mut rng, &mut page, &mut timing_input);
        with_progress(
            &format!("{number}. {}", variant.name),
            |line| match variant.kind {
                Step::OneBlockInclusive if variant.expect == Expect::Race => {
                    race_step(device, variant, rng, page)
                }
                Step::OneBlockInclusive | Step::OneBlockExclusive => {
                    one_block_step(device, variant, rng, page)
                }
                Step::GridInclusive => grid_step(device, variant, rng, page),
                Step::MultiLaunch { .. } => {
                    multi_launch_step(device, variant, sizes.multi_launch, rng, page)
                }
                Step::LargeArray { .. } => large_step(device, variant, &sizes, rng, page),
                Step::Convert { .. } => convert_step(device, variant, sizes.convert, rng, page),
                Step::DoesNotCompile => compile_step(device, variant, page),
                Step::ReduceThenScan { .. } | Step::SinglePass { .. } => {
                    let climb = Climb {
                        sizes: &sizes,
                        options,
                        timing_input,
                        line,
                    };
                    climb_step(device, variant, climb, rng, page)
                }
            },
        )?;
        flush(page, out)?;
    }
    if options.variant.is_none() {
        say(&mut page, "");
        work_section(options, &mut page)?;
        flush(&mut page, out)?;
        say(&mut page, "");
        timing_section(device, options, &mut timing_input, &mut page, out)?;
        flush(&mut page, out)?;
    }
    Ok(())
}

fn one_block_step(
    device: &mut Device,
    variant: &Ch6Variant,
    rng: &mut impl Rng,
    page: &mut String,
) -> Result<()> {
    let inclusive = variant.kind == Step::OneBlockInclusive;
    let lengths: &[usize] = match (inclusive, variant.expect.is_correct()) {
        (true, _) => &[1, 7, 1000, 1024],
        (false, true) => &[1, 7, 2000, 2048],
        (false, false) => &[6, 1000, 1024, 2048],
    };
    let mut findings = Vec::new();
    for &n in lengths {
        let input = small_values(n, rng);
        let want = if inclusive {
            inclusive_scan(&input)
        } else {
            exclusive_scan(&input)
        };
        let threads = default_one_block_threads(variant, n);
        let outcome = run_one_block(device, variant, &input, threads)?;
        let what = if inclusive { "inclusive" } else { "exclusive" };
        say(
            page,
            &format!(
                "n = {n:>4}, 1 block × {threads:>4} threads, {what}: {}",
                compare_exact(&outcome.result, &want)
            ),
        );
        if n == 6 {
            say(
                page,
                &format!(
                    "  in {:?} → got {:?}, want {:?}",
                    input, outcome.result, want
                ),
            );
        }
        findings.extend(outcome.report.findings);
    }
    if variant.name == "blelloch-shared" {
        bank_table(page);
    }
    checker_section(device, variant, &findings, page);
    Ok(())
}

fn bank_table(page: &mut String) {
    let m = crate::MAX_ONE_BLOCK_EXCLUSIVE;
    say(
        page,
        &format!(
            "bank conflicts of warp 0's temp[bi] in the up-sweep over {m} elements (32 banks of 4 bytes):"
        ),
    );
    let rows = up_sweep_bank_conflicts(m).into_iter().map(|level| {
        vec![
            level.offset.to_string(),
            level.active_lanes.to_string(),
            format!("{}-way", level.ways),
            format!("{}-way", level.padded_ways),
        ]
    });
    say(
        page,
        &table(
            &[
                "offset",
                "active lanes of warp 0",
                "conflict",
                "padded, i + i / 32 (step 18)",
            ],
            rows,
        ),
    );
}

fn race_step(
    device: &mut Device,
    variant: &Ch6Variant,
    rng: &mut impl Rng,
    page: &mut String,
) -> Result<()> {
    let n = 1000;
    let input = small_values(n, rng);
    let want = inclusive_scan(&input);
    let threads = default_one_block_threads(variant, n);
    let repeats = 5;
    let mut right = 0;
    let mut first_findings = None;
    for _ in 0..repeats {
        let outcome = run_one_block(device, variant, &input, threads)?;
        right += usize::from(compare_exact(&outcome.result, &want).is_match());
        first_findings.get_or_insert(outcome.report.findings);
    }
    let schedule = match device.emu_settings() {
        Some(settings) => format!(
            "the emulator's {} schedule",
            format!("{:?}", settings.schedule).to_lowercase()
        ),
        None => "the GPU".to_string(),
    };
    say(
        page,
        &format!(
            "n = {n}, 1 block × {threads} threads, {repeats} launches on {schedule}: {} {right} of {repeats} right",
            if right == repeats { "✓" } else { "✗" }
        ),
    );
    checker_section(device, variant, &first_findings.unwrap_or_default(), page);
    if device.emu_settings().is_some() {
        let adversarial = Schedule::Adversarial {
            seed: ADVERSARIAL_SEED,
        };
        let outcome = device.with_schedule(adversarial, |device| {
            run_one_block(device, variant, &input, threads)
        })?;
        say(
            page,
            &format!(
                "under the adversarial schedule (seed {ADVERSARIAL_SEED}: one warp runs ahead to its next barrier): {}",
                compare_exact(&outcome.result, &want)
            ),
        );
        let fixed = crate::variant("hillis-steele-double-buffer");
        let fixed_outcome = device.with_schedule(adversarial, |device| {
            run_one_block(device, fixed, &input, threads)
        });
        say(
            page,
            &format!(
                "{} under the same schedule: {}",
                fixed.name,
                compare_exact(&fixed_outcome?.result, &want)
            ),
        );
    }
    Ok(())
}

fn grid_step(
    device: &mut Device,
    variant: &Ch6Variant,
    rng: &mut impl Rng,
    page: &mut String,
) -> Result<()> {
    let threads = 1024;
    let mut findings = Vec::new();
    for n in [1000usize, 3000] {
        let input = small_values(n, rng);
        let want = inclusive_scan(&input);
        let outcome = run_grid_inclusive(device, variant, &input, threads)?;
        let comparison = compare_exact(&outcome.result, &want);
        say(
            page,
            &format!(
                "n = {n}, {} × {threads} threads: {comparison}",
                match n.div_ceil(threads as usize) {
                    1 => "1 block".to_string(),
                    blocks => format!("{blocks} blocks"),
                }
            ),
        );
        if let Some(first) = comparison.first_mismatches.first() {
            say(
                page,
                &format!(
                    "  the first wrong element is [{}]: the first of block {}, which started again from 0",
                    first.index,
                    first.index / threads as usize
                ),
            );
        }
        findings.extend(outcome.report.findings);
    }
    checker_section(device, variant, &findings, page);
    Ok(())
}

fn multi_launch_step(
    device: &mut Device,
    variant: &Ch6Variant,
    n: usize,
    rng: &mut impl Rng,
    page: &mut String,
) -> Result<()> {
    let mut findings = Vec::new();
    for n in [1, 5, n] {
        let input = small_values(n, rng);
        let outcome = run_multi_launch(device, variant, &input, DEFAULT_THREADS)?;
        let m = padded_len(n);
        say(
            page,
            &format!(
                "n = {n}, padded to {m} with 0: {} launches ({} up-sweep + {} down-sweep), {}",
                outcome.launches,
                strides(m).len(),
                strides(m).len(),
                compare_exact(&outcome.result, &exclusive_scan(&input))
            ),
        );
        findings.extend(outcome.report.findings);
    }
    checker_section(device, variant, &findings, page);
    Ok(())
}

fn large_step(
    device: &mut Device,
    variant: &Ch6Variant,
    sizes: &Sizes,
    rng: &mut impl Rng,
    page: &mut String,
) -> Result<()> {
    let threads = DEFAULT_THREADS;
    let tile = 2 * threads as usize;
    let input = small_values(sizes.large_u32, rng);
    let outcome = run_large_scan(
        device,
        variant,
        LargeScanKernels::u32(variant)?,
        &input,
        threads,
    )?;
    let levels: Vec<String> = large_scan_levels(input.len(), threads)
        .iter()
        .map(|&(len, tiles)| format!("{len} → {tiles} tile(s)"))
        .collect();
    say(
        page,
        &format!(
            "unsigned int, n = {}, tiles of {tile} ({threads} threads): levels {}; {} launches: {}",
            input.len(),
            levels.join(", then "),
            outcome.launches,
            compare_exact(&outcome.result, &exclusive_scan(&input))
        ),
    );
    let mut findings = outcome.report.findings;

    let floats: Vec<f32> = (0..sizes.large_f32)
        .map(|_| rng.random_range(-1.0f32..1.0))
        .collect();
    let outcome = run_large_scan(
        device,
        variant,
        LargeScanKernels::f32(variant)?,
        &floats,
        threads,
    )?;
    let depth = large_scan_depth(floats.len(), threads);
    let abs_sums = exclusive_abs_sums(&floats);
    let got: Vec<f64> = outcome.result.iter().map(|&v| f64::from(v)).collect();
    let comparison = compare_within(&got, &exclusive_scan_f64(&floats), |i| {
        bounds::sum_f32(depth, abs_sums[i])
    });
    let worst = got
        .iter()
        .zip(exclusive_scan_f64(&floats))
        .map(|(g, w)| (g - w).abs())
        .fold(0.0, f64::max);
    say(
        page,
        &format!(
            "f32, n = {}: {comparison}, each within γ_{} · Σ|x_j| (at most {depth} additions behind any element); largest error {worst:.2e}",
            floats.len(),
            depth + 1,
        ),
    );
    findings.extend(outcome.report.findings);
    checker_section(device, variant, &findings, page);
    Ok(())
}

fn convert_step(
    device: &mut Device,
    variant: &Ch6Variant,
    n: usize,
    rng: &mut impl Rng,
    page: &mut String,
) -> Result<()> {
    let example = [3u32, 1, 7, 0, 4, 1, 6, 3];
    let inclusive = inclusive_scan(&example);
    let exclusive = exclusive_scan(&example);
    say(page, &format!("in        {example:?}"));
    say(page, &format!("inclusive {inclusive:?}"));
    say(page, &format!("exclusive {exclusive:?}"));
    let mut shifted: Vec<u32> = exclusive[1..].to_vec();
    shifted.push(exclusive[exclusive.len() - 1]);
    say(
        page,
        &format!(
            "exclusive shifted left, last element kept as it was: {shifted:?} — the total {} is lost",
            inclusive[inclusive.len() - 1]
        ),
    );
    let outcome = run_convert(device, variant, &example, &inclusive, &exclusive, 256)?;
    say(
        page,
        &format!(
            "n = 8: inclusive → exclusive {}; exclusive → inclusive {:?} {}",
            compare_exact(&outcome.result.0, &exclusive),
            outcome.result.1,
            compare_exact(&outcome.result.1, &inclusive)
        ),
    );
    let mut findings = outcome.report.findings;
    let input = small_values(n, rng);
    let (inclusive, exclusive) = (inclusive_scan(&input), exclusive_scan(&input));
    let outcome = run_convert(device, variant, &input, &inclusive, &exclusive, 256)?;
    say(
        page,
        &format!(
            "n = {n}: inclusive → exclusive {}; exclusive → inclusive {}",
            compare_exact(&outcome.result.0, &exclusive),
            compare_exact(&outcome.result.1, &inclusive)
        ),
    );
    findings.extend(outcome.report.findings);
    checker_section(device, variant, &findings, page);
    Ok(())
}

/// What a climb step needs besides the device and the variant.
struct Climb<'a> {
    sizes: &'a Sizes,
    options: &'a Options,
    /// On a GPU, the timing input, made by the first climb step that runs.
    timing_input: &'a mut Option<TimingInput>,
    line: &'a ProgressBar,
}

fn climb_step(
    device: &mut Device,
    variant: &Ch6Variant,
    climb: Climb<'_>,
    rng: &mut impl Rng,
    page: &mut String,
) -> Result<()> {
    let Climb {
        sizes,
        options,
        timing_input,
        line,
    } = climb;
    let threads = sizes.climb_threads;
    let say_scan = |page: &mut String, n: usize, launches: u32, comparison: String| {
        say(
            page,
            &format!(
                "n = {n}, {} tiles of {} ({threads} threads × {} elements), {launches} launch(es): {comparison}",
                tile_count(variant, n, threads),
                crate::tile_len(variant, threads),
                tile_items(variant),
            ),
        );
    };
    // On a GPU the timing input itself, so a profiler run with --variant sees what is timed.
    if device.kind().is_cuda() {
        let input = TimingInput::get(timing_input, device, options, line)?;
        line.set_message(format!("{}: scanning, then checking", variant.name));
        let (comparison, launches) = input.scan_with(device, variant, threads)?;
        say_scan(page, input.values.len(), launches, comparison.to_string());
        checker_section(device, variant, &[], page);
        return Ok(());
    }
    let n = sizes.climb;
    let input = small_values(n, rng);
    let want = exclusive_scan(&input);
    let outcome = run_tile_scan(device, variant, &input, threads)?;
    say_scan(
        page,
        input.len(),
        outcome.launches,
        compare_exact(&outcome.result, &want).to_string(),
    );
    if variant.expect == Expect::Race
        && let Some(seed) = adversarial_seed(device, options.seed)
    {
        let racy = device.with_schedule(Schedule::Adversarial { seed }, |device| {
            run_tile_scan(device, variant, &input, threads)
        })?;
        say(
            page,
            &format!(
                "under the adversarial schedule (seed {seed}), where a warp that publishes or reads a flag gives another warp the next turn: {}",
                compare_exact(&racy.result, &want)
            ),
        );
    }
    checker_section(device, variant, &outcome.report.findings, page);
    Ok(())
}

fn compile_step(device: &mut Device, variant: &Ch6Variant, page: &mut String) -> Result<()> {
    let error = crate::compile_error(device, variant)?;
    say(page, "launching it gives:");
    for line in error.to_string().lines() {
        say(page, &format!("  {line}"));
    }
    if let Some(location) = variant.bug_location() {
        let named = error.to_string().contains(&format!("{location}: error"));
        say(
            page,
            &format!(
                "the first error is at the // BUG: line {location}: {}",
                if named { "named ✓" } else { "not named ✗" }
            ),
        );
    }
    Ok(())
}

fn work_section(options: &Options, page: &mut String) -> Result<()> {
    say(page, "## Work and span");
    say(
        page,
        "additions counted by running each kernel's index pattern on the CPU; a step is what a barrier (or a launch) separates",
    );
    let rows = [32usize, 1024, 2048, 1 << 20].into_iter().map(|n| {
        let ones = vec![1u32; n];
        let (_, naive) = hillis_steele_counted(&ones);
        let (_, efficient) = blelloch_counted(&ones);
        vec![
            n.to_string(),
            (n - 1).to_string(),
            naive.additions.to_string(),
            naive.steps.to_string(),
            efficient.additions.to_string(),
            efficient.steps.to_string(),
            format!("{:.1}", naive.additions as f64 / efficient.additions as f64),
        ]
    });
    say(
        page,
        &table(
            &[
                "n",
                "sequential additions",
                "Hillis–Steele additions",
                "steps",
                "Blelloch additions",
                "steps",
                "HS ÷ Blelloch work",
            ],
            rows,
        ),
    );
    let plot = options.out.join("up_sweep_16.svg");
    tree_svg(&plot, DIAGRAM_LEN)?;
    say(
        page,
        &format!(
            "diagram: {} (the up-sweep and down-sweep pairs for n = {DIAGRAM_LEN}, from up_sweep_levels)",
            plot.display()
        ),
    );
    Ok(())
}

/// The up-sweep tree over `m` elements drawn from [`up_sweep_levels`], then the down-sweep
/// below it: one row per level, an arrow from each element added into the one it updates.
pub fn tree_svg(path: &Path, m: usize) -> Result<()> {
    let levels = up_sweep_levels(m);
    let rows = 2 * levels.len() + 2;
    let (cell, row_height, left_margin, top) = (52i32, 46i32, 150i32, 50i32);
    let width = left_margin + cell * m as i32 + 20;
    let height = top + row_height * rows as i32 + 10;
    let plot_error = |e: &dyn std::fmt::Display| HarnessError::Plot {
        path: path.to_path_buf(),
        message: e.to_string(),
    };
    let root = SVGBackend::new(path, (width as u32, height as u32)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| plot_error(&e))?;
    let font = ("sans-serif", 15).into_font();
    root.draw(&Text::new(
        format!("Blelloch scan of {m} elements: up-sweep (right += left), then down-sweep"),
        (10, 12),
        ("sans-serif", 20).into_font(),
    ))
    .map_err(|e| plot_error(&e))?;
    let x_of = |i: usize| left_margin + cell * i as i32 + cell / 2;
    let y_of = |row: usize| top + row_height * row as i32 + row_height / 2;
    let up_colour = RGBColor(31, 119, 180);
    let down_colour = RGBColor(214, 39, 40);
    // Row 0: the input; rows 1..=L: after each up-sweep level; row L+1: root cleared;
    // rows L+2..: after each down-sweep level.
    let mut row_labels = vec!["input".to_string()];
    for (level, _) in levels.iter().enumerate() {
        row_labels.push(format!("up, stride {}", 2usize << level));
    }
    row_labels.push("clear root".to_string());
    for (level, _) in levels.iter().enumerate().rev() {
        row_labels.push(format!("down, stride {}", 2usize << level));
    }
    for (row, label) in row_labels.iter().enumerate() {
        root.draw(&Text::new(label.clone(), (6, y_of(row) - 7), font.clone()))
            .map_err(|e| plot_error(&e))?;
        for i in 0..m {
            let (x, y) = (x_of(i), y_of(row));
            root.draw(&Rectangle::new(
                [(x - 16, y - 11), (x + 16, y + 11)],
                RGBColor(200, 200, 200).stroke_width(1),
            ))
            .map_err(|e| plot_error(&e))?;
            root.draw(&Text::new(i.to_string(), (x - 8, y - 7), font.clone()))
                .map_err(|e| plot_error(&e))?;
        }
    }
    let arrow = |from: (i32, i32), to: (i32, i32), colour: RGBColor| {
        PathElement::new(vec![from, to], colour.stroke_width(2))
    };
    for (level, pairs) in levels.iter().enumerate() {
        let (from_row, to_row) = (level, level + 1);
        for &(left, right) in pairs {
            for source in [left, right] {
                root.draw(&arrow(
                    (x_of(source), y_of(from_row) + 11),
                    (x_of(right), y_of(to_row) - 11),
                    up_colour,
                ))
                .map_err(|e| plot_error(&e))?;
            }
        }
    }
    let clear_row = levels.len() + 1;
    root.draw(&Rectangle::new(
        [
            (x_of(m - 1) - 16, y_of(clear_row) - 11),
            (x_of(m - 1) + 16, y_of(clear_row) + 11),
        ],
        down_colour.stroke_width(3),
    ))
    .map_err(|e| plot_error(&e))?;
    for (step, pairs) in levels.iter().rev().enumerate() {
        let (from_row, to_row) = (clear_row + step, clear_row + step + 1);
        for &(left, right) in pairs {
            // left ← right; right ← right + left
            for (source, target) in [(right, left), (right, right), (left, right)] {
                root.draw(&arrow(
                    (x_of(source), y_of(from_row) + 11),
                    (x_of(target), y_of(to_row) - 11),
                    down_colour,
                ))
                .map_err(|e| plot_error(&e))?;
            }
        }
    }
    root.present().map_err(|e| plot_error(&e))
}

fn timing_section(
    device: &mut Device,
    options: &Options,
    timing_input: &mut Option<TimingInput>,
    page: &mut String,
    out: &mut dyn Write,
) -> Result<()> {
    say(page, "## GPU timing");
    let n = timing_elements(options);
    let m = padded_len(n);
    say(
        page,
        &format!(
            "launches for n = {n}: blelloch-multi-launch {} (2 × log₂ {m}), large-array-scan {} ({} levels of tiles of {})",
            2 * strides(m).len(),
            large_scan_launch_count(n, DEFAULT_THREADS),
            large_scan_levels(n, DEFAULT_THREADS).len(),
            2 * DEFAULT_THREADS
        ),
    );
    if !device.kind().is_cuda() {
        say(
            page,
            &format!(
                "timings {}",
                timing_skipped("times, GB/s against a device copy, and the cost of each launch")
            ),
        );
        return Ok(());
    }
    say(
        page,
        &format!("input: {n} random unsigned ints, {} bytes", 4 * n),
    );
    flush(page, out)?;
    with_progress("checking and timing", |line| {
        measure(device, options, timing_input, line, page)
    })
}

/// The timing section's measurements and what they print, after its first lines.
fn measure(
    device: &mut Device,
    options: &Options,
    timing_input: &mut Option<TimingInput>,
    line: &ProgressBar,
    page: &mut String,
) -> Result<()> {
    let input = TimingInput::get(timing_input, device, options, line)?;
    let n = input.values.len();
    let m = padded_len(n);

    // The CPU row: the reference scan on one core, timed; it must agree with the scan on every
    // core that checks the kernels.
    line.set_message("the CPU row: one core scans the input");
    let started = Instant::now();
    let serial = exclusive_scan(&input.values);
    let cpu_ms = started.elapsed().as_secs_f64() * 1e3;
    if !compare_exact(&serial, &input.want).is_match() {
        return Err(HarnessError::Invalid(
            "the scans on one core and on every core disagree".into(),
        ));
    }
    drop(serial);

    let repetitions = 10;
    let bytes = 4 * n;
    let copy_ms = device
        .time_device_copy_ms(bytes, repetitions)?
        .ok_or_else(|| HarnessError::Invalid("the device copy could not be timed".into()))?;

    // Large-array scan: checked once, then timed.
    line.set_message("large-array-scan: checking, then timing");
    let large = crate::variant("large-array-scan");
    let kernels = LargeScanKernels::u32(large)?;
    // From zeros, so that a scan that skipped elements could not pass on a climb step's.
    device.clear(&mut input.out)?;
    let sums = large_scan_sums::<u32>(device, n, DEFAULT_THREADS)?;
    let (_, large_launches) = large_scan_enqueue(
        device,
        kernels,
        &input.on_device,
        &input.out,
        &sums,
        DEFAULT_THREADS,
        true,
    )?;
    device.download_into(&input.out, &mut input.got)?;
    let check = compare_exact(&input.got, &input.want);
    if !check.is_match() {
        return Err(HarnessError::Invalid(format!(
            "large-array-scan is wrong on the timing input: {check}"
        )));
    }
    let large_ms = device
        .time_ms(repetitions, |device| {
            large_scan_enqueue(
                device,
                kernels,
                &input.on_device,
                &input.out,
                &sums,
                DEFAULT_THREADS,
                false,
            )
            .map(drop)
        })?
        .unwrap_or(f64::NAN);
    drop(sums);

    // Multi-launch Blelloch on the padded input: checked once, then timed (the timed runs scan
    // data already scanned, which costs the same).
    line.set_message("blelloch-multi-launch: checking, then timing");
    let multi = crate::variant("blelloch-multi-launch");
    let data = if m == n {
        device.upload(&input.values, "data")?
    } else {
        let mut padded = input.values.clone();
        padded.resize(m, 0);
        device.upload(&padded, "data")?
    };
    let (_, multi_launches) = multi_launch_sweeps(device, multi, &data, DEFAULT_THREADS, true)?;
    let check = if m == n {
        device.download_into(&data, &mut input.got)?;
        compare_exact(&input.got, &input.want)
    } else {
        let mut got = device.download(&data)?;
        got.truncate(n);
        compare_exact(&got, &input.want)
    };
    if !check.is_match() {
        return Err(HarnessError::Invalid(format!(
            "blelloch-multi-launch is wrong on the timing input: {check}"
        )));
    }
    let multi_ms = device
        .time_ms(repetitions, |device| {
            multi_launch_sweeps(device, multi, &data, DEFAULT_THREADS, false).map(drop)
        })?
        .unwrap_or(f64::NAN);
    // The cost of a launch itself: the top up-sweep level, one thread adding two numbers.
    let m32 = m as u32;
    let launch_ms = device
        .time_ms(100, |device| {
            device.launch_async(
                &multi.kernel,
                harness::LaunchShape::linear(1, 1),
                &[(&data).into(), m32.into(), m32.into()],
            )
        })?
        .unwrap_or(f64::NAN);

    drop(data);

    // The climb: each rung checked once on the timing input, then timed.
    let mut climb = vec![(CLIMB[0], large_launches, large_ms)];
    for name in &CLIMB[1..] {
        line.set_message(format!("{name}: checking, then timing"));
        let variant = crate::variant(name);
        let (check, launches) = input.scan_with(device, variant, CLIMB_THREADS)?;
        if !check.is_match() {
            return Err(HarnessError::Invalid(format!(
                "{name} is wrong on the timing input: {check}"
            )));
        }
        // Sized to this rung's tiles, so a single pass zeroes exactly the status it uses.
        let mut buffers = TileScanBuffers::new(device, tile_count(variant, n, CLIMB_THREADS))?;
        let ms = device
            .time_ms(REPETITIONS, |device| {
                tile_scan_enqueue(
                    device,
                    variant,
                    &input.on_device,
                    &input.out,
                    CLIMB_THREADS,
                    &mut buffers,
                    false,
                )
                .map(drop)
            })?
            .unwrap_or(f64::NAN);
        climb.push((name, launches, ms));
    }

    let gb = bytes as f64 / 1e9;
    let mut lines = vec![
        (
            "CPU sequential scan (one core)".to_string(),
            "-".to_string(),
            cpu_ms,
        ),
        (
            format!(
                "GPU large-array-scan ({} threads per block)",
                DEFAULT_THREADS
            ),
            large_launches.to_string(),
            large_ms,
        ),
        (
            format!("GPU blelloch-multi-launch (padded to {m})"),
            multi_launches.to_string(),
            multi_ms,
        ),
    ];
    for &(name, launches, ms) in &climb[1..] {
        lines.push((
            format!("GPU {name} ({CLIMB_THREADS} threads per block)"),
            launches.to_string(),
            ms,
        ));
    }
    lines.push((
        format!("GPU device-to-device copy of the {bytes} bytes"),
        "-".to_string(),
        copy_ms,
    ));
    let rows = lines.iter().map(|(name, launches, ms)| {
        vec![
            name.clone(),
            launches.clone(),
            format!("{ms:.3}"),
            format!("{:.1}", gb / (ms / 1e3)),
            format!("{:.2}", ms / copy_ms),
        ]
    });
    let rendered = table(
        &["what", "launches", "ms", "input GB/s", "time ÷ copy time"],
        rows,
    );
    say(page, &rendered);
    say(
        page,
        &format!(
            "one launch of a one-thread kernel: {:.4} ms; × {multi_launches} launches = {:.3} ms, {:.1}% of blelloch-multi-launch",
            launch_ms,
            launch_ms * f64::from(multi_launches),
            100.0 * launch_ms * f64::from(multi_launches) / multi_ms
        ),
    );
    say(
        page,
        "every GPU result above was checked against the CPU first; the copy reads and writes the same bytes in the same run",
    );
    let how = format!(
        "{n} random unsigned ints; mean of {REPETITIONS} runs after a warm-up, CUDA events; the CPU row on one core of the same host"
    );
    let file = write_gpu_table(
        &options.out,
        device.name(),
        "ch6-scans --backend cuda",
        &how,
        &rendered,
    )?;
    say(page, &format!("table for the book: {}", file.display()));

    say(page, "");
    say(page, "## How fast can it go");
    let climb_table = render_climb(&climb, copy_ms, bytes);
    say(page, &climb_table);
    say(
        page,
        "÷ copy's byte rate: a scan reads its input and writes as many bytes, the same bytes as the device copy moves, so the ratio is the copy's time over the scan's; the single passes' times include zeroing their tile counter and flags",
    );
    let file = write_gpu_markdown(
        &options.out.join("climb_table.md"),
        device.name(),
        "ch6-scans --backend cuda",
        &how,
        &climb_table,
    )?;
    say(
        page,
        &format!("climb table for the book: {}", file.display()),
    );
    let chart = options.out.join("climb.svg");
    let ratios: Vec<(String, f64)> = climb
        .iter()
        .map(|&(name, _, ms)| (name.to_string(), copy_ms / ms))
        .collect();
    climb_svg(
        &chart,
        &format!("Exclusive scan of {n} unsigned ints on {}", device.name()),
        "bytes moved per second ÷ the device copy's",
        &ratios,
    )?;
    say(page, &format!("bar chart: {}", chart.display()));
    Ok(())
}

/// The climb as a table: each rung's launches, time, input GB/s, ratio to the copy's byte rate
/// (a scan moves the same bytes as the copy) and speedup over the rung before.
fn render_climb(climb: &[(&str, u32, f64)], copy_ms: f64, bytes: usize) -> String {
    let mut previous: Option<f64> = None;
    let rows = climb.iter().map(|&(name, launches, ms)| {
        let step = previous.map_or("—".to_string(), |p| format!("{:.2}×", p / ms));
        previous = Some(ms);
        let kernel = crate::variant(name).kernel.path;
        vec![
            name.to_string(),
            kernel.rsplit('/').next().unwrap_or_default().to_string(),
            launches.to_string(),
            format!("{ms:.3}"),
            format!("{:.1}", bytes as f64 / 1e9 / (ms / 1e3)),
            format!("{:.2}", copy_ms / ms),
            step,
        ]
    });
    table(
        &[
            "step",
            "kernel",
            "launches",
            "ms",
            "input GB/s",
            "÷ copy's byte rate",
            "step speedup",
        ],
        rows,
    )
}
