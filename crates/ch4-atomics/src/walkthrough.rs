//! `cargo run -p ch4-atomics`: the chapter in teaching order, on whichever backend is chosen.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Instant;

use harness::rand::Rng;
use harness::report::{
    SeriesLabelPosition, climb_svg, grouped_bars_svg_with_axes, progress, sweep_svg, table,
    write_gpu_markdown,
};
use harness::verify::compare_exact;
use harness::walk::{
    checker_section, flush, heading, opening, repeated_launches, say, selected, timing_skipped,
    with_progress, working,
};
use harness::{Device, Expect, HarnessError, LaunchShape, Result};

use crate::{
    ASCII_BINS, BYTE_BINS, BYTE_HISTOGRAM_CLIMB, Ch4Variant, INCREMENT_SHAPE, Step, VARIANTS,
    ascii_histogram_idiomatic, ascii_histogram_loop, byte_histogram, histogram_loop,
    histogram_on_every_core, run_any_bins_histogram, run_ascii_histogram, run_byte_histogram,
    run_increment, variant,
};

/// The real English text the chapter counts letters of by default (provenance: `data/README.md`).
pub const DEFAULT_TEXT: &[u8] = include_bytes!("../../../data/gpl-3.0.txt");
pub const DEFAULT_TEXT_NAME: &str = "data/gpl-3.0.txt";

/// The launch the histogram steps use on the text.
pub const HISTOGRAM_SHAPE: LaunchShape = LaunchShape::linear(32, 256);
/// The smaller block variant 7 is shown failing with.
pub const SMALL_BLOCK_SHAPE: LaunchShape = LaunchShape::linear(32, 64);
/// How many times the racy increment is repeated to show it differs from 160.
pub const RACE_REPEATS: usize = 5;
/// The launches of the lost-updates plot: every thread adds one to x[0], so the threads per
/// address are the launch's threads, from one (nothing to lose) to four blocks of 256.
pub const LOST_UPDATE_SHAPES: [LaunchShape; 7] = [
    LaunchShape::linear(1, 1),
    LaunchShape::linear(1, 2),
    LaunchShape::linear(1, 8),
    LaunchShape::linear(1, 32),
    LaunchShape::linear(2, 32),
    LaunchShape::linear(10, 16),
    LaunchShape::linear(4, 256),
];
/// Most timed launches per point of the blocks-per-grid sweep.
pub const SWEEP_REPETITIONS: u32 = 5;
/// Milliseconds of timed launches a sweep point aims at: one block takes over a second a
/// launch on a GiB of text, so it gets one, while the full grids get all [`SWEEP_REPETITIONS`].
pub const SWEEP_BUDGET_MS: f64 = 200.0;
/// Largest input the timing section accepts: the kernels' length is a 32-bit `unsigned int`.
pub const MAX_TIMING_BYTES: u64 = u32::MAX as u64;

#[derive(Debug, Clone)]
pub struct Options {
    pub seed: u64,
    pub variant: Option<String>,
    pub text: Vec<u8>,
    pub text_name: String,
    /// Bytes of the timing input (the text repeated): 1 GiB by default.
    pub timing_bytes: u64,
    pub out: PathBuf,
}

impl Options {
    pub fn new(seed: u64, out: PathBuf) -> Self {
        Self {
            seed,
            variant: None,
            text: DEFAULT_TEXT.to_vec(),
            text_name: format!("{DEFAULT_TEXT_NAME} (built in)"),
            timing_bytes: 1 << 30,
            out,
        }
    }
}

/// Writes the walk-through to `out`; plots go to `options.out`.
pub fn walkthrough(device: &mut Device, options: &Options, out: &mut dyn Write) -> Result<()> {
    let text = options.text.as_slice();
    let mut page = String::new();
    opening(
        &mut page,
        device,
        &[&format!(
            "seed {} · text {} ({} bytes) · plots in {}",
            options.seed,
            options.text_name,
            text.len(),
            options.out.display()
        )],
        &options.out,
        out,
    )?;

    for (number, variant) in selected(VARIANTS, options.variant.as_deref())? {
        heading(&mut page, number, variant);
        let page = &mut page;
        with_progress(&format!("{number}. {}", variant.name), |_| {
            match variant.kind {
                Step::Increment => increment_step(device, variant, options, page),
                Step::AsciiHistogram => ascii_step(device, variant, text, options, page),
                Step::AnyBinsHistogram => any_bins_step(device, variant, options.seed, page),
                Step::ByteHistogram => byte_step(device, variant, options, page),
            }
        })?;
        flush(page, out)?;
    }
    if options.variant.is_none() {
        say(&mut page, "");
        let timed = timing_section(device, options, &mut page, out)?;
        flush(&mut page, out)?;
        say(&mut page, "");
        climb_section(device, options, timed, &mut page, out)?;
        flush(&mut page, out)?;
    }
    Ok(())
}

/// Uniformly random bytes from `seed`: every bin equally likely, the input the climb is timed
/// on. Drawn on every core in pieces (see [`harness::cli::seeded_fill`]); up to 2^20 bytes,
/// what one generator's `fill` gives.
pub fn random_bytes(len: usize, seed: u64) -> Vec<u8> {
    let mut bytes = vec![0u8; len];
    harness::cli::seeded_fill(&mut bytes, seed, |rng, piece| rng.fill(piece));
    bytes
}

/// Random bytes the emulator's walk-through counts beside the text.
pub const EMU_RANDOM_BYTES: usize = 20_000;

fn byte_step(
    device: &mut Device,
    variant: &Ch4Variant,
    options: &Options,
    page: &mut String,
) -> Result<()> {
    let count = if device.kind().is_cuda() {
        10_000_000
    } else {
        EMU_RANDOM_BYTES
    };
    let random = random_bytes(count, options.seed);
    let mut findings = Vec::new();
    for (what, bytes) in [
        (
            format!("{}, {} bytes", options.text_name, options.text.len()),
            options.text.as_slice(),
        ),
        (format!("{count} random bytes"), random.as_slice()),
    ] {
        let outcome = run_byte_histogram(device, variant, bytes, HISTOGRAM_SHAPE)?;
        say(
            page,
            &format!(
                "{what}, {HISTOGRAM_SHAPE}: {}",
                compare_exact(&outcome.result, &byte_histogram(bytes))
            ),
        );
        findings.extend(outcome.report.findings);
    }
    checker_section(device, variant, &findings, page);
    Ok(())
}

fn increment_step(
    device: &mut Device,
    variant: &Ch4Variant,
    options: &Options,
    page: &mut String,
) -> Result<()> {
    let want = i32::try_from(INCREMENT_SHAPE.total_threads()).unwrap_or(i32::MAX);
    say(
        page,
        &format!("{INCREMENT_SHAPE}: every thread adds 1, so x[0] should end at {want}"),
    );
    let findings = repeated_launches(page, "x[0]", &want, RACE_REPEATS, || {
        let outcome = run_increment(device, variant, INCREMENT_SHAPE)?;
        Ok((outcome.result, outcome.report.findings))
    })?;
    checker_section(device, variant, &findings, page);
    // Once the atomic fix has been shown, the lesson of both in one picture.
    if variant.expect.is_correct() {
        lost_updates_plot(device, options, page)?;
    }
    Ok(())
}

/// The racy and the atomic increment at every launch of [`LOST_UPDATE_SHAPES`]: how many of
/// the threads' additions each one lost, as a table and `lost_updates.svg`.
fn lost_updates_plot(device: &mut Device, options: &Options, page: &mut String) -> Result<()> {
    let (racy, atomic) = (variant("racy-increment"), variant("atomic-increment"));
    say(page, "");
    say(
        page,
        "Lost updates against threads per address (every thread adds 1 to x[0]):",
    );
    let mut rows = Vec::new();
    let (mut labels, mut racy_lost, mut atomic_lost) = (Vec::new(), Vec::new(), Vec::new());
    for shape in LOST_UPDATE_SHAPES {
        let threads = shape.total_threads();
        let lost = |result: i32| threads.saturating_sub(u64::try_from(result).unwrap_or(0));
        let racy_result = run_increment(device, racy, shape)?.result;
        let atomic_result = run_increment(device, atomic, shape)?.result;
        let percent = |lost: u64| 100.0 * lost as f64 / threads as f64;
        labels.push(threads.to_string());
        racy_lost.push(percent(lost(racy_result)));
        atomic_lost.push(percent(lost(atomic_result)));
        rows.push(vec![
            threads.to_string(),
            shape.to_string(),
            format!("{racy_result} ({} lost)", lost(racy_result)),
            format!("{atomic_result} ({} lost)", lost(atomic_result)),
        ]);
    }
    say(
        page,
        &table(
            &["threads per address", "launch", "racy x[0]", "atomic x[0]"],
            rows,
        ),
    );
    let plot = options.out.join("lost_updates.svg");
    // A bar of 0 is a line on the axis; the legend says it in words too.
    let atomic_name = if atomic_lost.iter().all(|&lost| lost == 0.0) {
        "atomic: atomicAdd(&x[0], 1), none lost at any count"
    } else {
        "atomic: atomicAdd(&x[0], 1)"
    };
    grouped_bars_svg_with_axes(
        &plot,
        "Lost updates: every thread adds 1 to x[0]",
        "threads per address (all the launch's threads add to x[0])",
        &labels,
        &[
            ("racy: x[0] = x[0] + 1", racy_lost),
            (atomic_name, atomic_lost),
        ],
        "updates lost (%)",
        Some(SeriesLabelPosition::UpperLeft),
    )?;
    say(
        page,
        &format!(
            "plot: {} (the share of additions lost, racy beside atomic)",
            plot.display()
        ),
    );
    Ok(())
}

fn ascii_step(
    device: &mut Device,
    variant: &Ch4Variant,
    text: &[u8],
    options: &Options,
    page: &mut String,
) -> Result<()> {
    let want = ascii_histogram_loop(text);
    let shape = if variant.expect == Expect::WrongResult {
        SMALL_BLOCK_SHAPE
    } else {
        HISTOGRAM_SHAPE
    };
    if variant.expect == Expect::WrongResult {
        let at_128 = run_ascii_histogram(
            device,
            variant,
            text,
            LaunchShape::linear(32, ASCII_BINS as u32),
        )?;
        say(
            page,
            &format!(
                "{}: {}",
                LaunchShape::linear(32, ASCII_BINS as u32),
                compare_exact(&at_128.result, &want)
            ),
        );
    }
    let outcome = run_ascii_histogram(device, variant, text, shape)?;
    let comparison = compare_exact(&outcome.result, &want);
    say(page, &format!("{shape}: {comparison}"));
    if !comparison.is_match() {
        let counted: u64 = outcome.result.iter().map(|&c| u64::from(c)).sum();
        let expected: u64 = want.iter().map(|&c| u64::from(c)).sum();
        say(page, &format!("counted {counted} characters of {expected}"));
    }
    if variant.name == "histogram-global-atomics" {
        say(
            page,
            &format!("most frequent: {}", most_frequent(&outcome.result, 8)),
        );
        let plot = options.out.join("letters.svg");
        letter_plot(&plot, &outcome.result, &options.text_name)?;
        say(
            page,
            &format!(
                "plot: {} (lowercase and uppercase counts per letter)",
                plot.display()
            ),
        );
    }
    checker_section(device, variant, &outcome.report.findings, page);
    Ok(())
}

fn any_bins_step(
    device: &mut Device,
    variant: &Ch4Variant,
    seed: u64,
    page: &mut String,
) -> Result<()> {
    let count = if device.kind().is_cuda() {
        10_000_000
    } else {
        20_000
    };
    let mut rng = harness::cli::seeded_rng(seed);
    let mut all_clean = Vec::new();
    for bins in [7u32, 256, 1000, 12_000] {
        // A few values beyond the last bin check that the kernel skips them.
        let values: Vec<u32> = (0..count)
            .map(|_| rng.random_range(0..bins + bins / 8 + 1))
            .collect();
        let outcome = run_any_bins_histogram(device, variant, &values, bins, 32, 256)?;
        let comparison = compare_exact(&outcome.result, &histogram_loop(&values, bins as usize));
        say(
            page,
            &format!(
                "{count} random values, {bins:>5} bins, {} B shared: {comparison}",
                bins * 4
            ),
        );
        all_clean.extend(outcome.report.findings);
    }
    checker_section(device, variant, &all_clean, page);
    Ok(())
}

fn most_frequent(histo: &[u32], shown: usize) -> String {
    let mut ranked: Vec<(usize, u32)> = histo
        .iter()
        .copied()
        .enumerate()
        .filter(|&(_, c)| c > 0)
        .collect();
    ranked.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    ranked
        .iter()
        .take(shown)
        .map(|&(byte, count)| format!("{} {count}", printable(byte)))
        .collect::<Vec<_>>()
        .join(" · ")
}

fn printable(byte: usize) -> String {
    match u8::try_from(byte).map(char::from) {
        Ok(' ') => "' '".to_string(),
        Ok('\n') => "'\\n'".to_string(),
        Ok(c) if c.is_ascii_graphic() => format!("'{c}'"),
        _ => format!("0x{byte:02x}"),
    }
}

fn letter_plot(path: &Path, histo: &[u32], text_name: &str) -> Result<()> {
    let labels: Vec<String> = (b'a'..=b'z').map(|c| char::from(c).to_string()).collect();
    let count = |c: u8| f64::from(histo[usize::from(c)]);
    let lower: Vec<f64> = (b'a'..=b'z').map(count).collect();
    let upper: Vec<f64> = (b'A'..=b'Z').map(count).collect();
    grouped_bars_svg_with_axes(
        path,
        &format!(
            "Letters of {}",
            text_name.split(' ').next().unwrap_or(text_name)
        ),
        "letter",
        &labels,
        &[("lowercase", lower), ("uppercase", upper)],
        "count",
        Some(SeriesLabelPosition::UpperRight),
    )
}

/// What the timing section measured that the climb compares with: the copy of the timing
/// input and the text on the device.
struct Timed {
    copy_ms: f64,
    text: harness::Buffer<u8>,
    text_host: Vec<u8>,
    /// The text's ASCII histogram, the CPU's.
    ascii_want: Vec<u32>,
}

fn timing_section(
    device: &mut Device,
    options: &Options,
    page: &mut String,
    out: &mut dyn Write,
) -> Result<Option<Timed>> {
    say(page, "## GPU timing");
    if !device.kind().is_cuda() {
        say(
            page,
            &timing_skipped("the timing table and the blocks-per-grid sweep"),
        );
        return Ok(None);
    }
    let bytes = options.timing_bytes.clamp(1, MAX_TIMING_BYTES);
    say(
        page,
        &format!("input: {} repeated to {bytes} bytes", options.text_name),
    );
    flush(page, out)?;
    let line = working("the CPU rows: one core counts the text, twice");
    let text = repeat_to(&options.text, bytes as usize);

    let started = Instant::now();
    let want = ascii_histogram_loop(&text);
    let cpu_loop_ms = started.elapsed().as_secs_f64() * 1e3;
    let started = Instant::now();
    let idiomatic = ascii_histogram_idiomatic(&text);
    let cpu_idiomatic_ms = started.elapsed().as_secs_f64() * 1e3;
    if idiomatic != want {
        return Err(HarnessError::Invalid(
            "the two CPU references disagree".into(),
        ));
    }

    let text_buffer = device.upload(&text, "text")?;
    let mut histo = device.zeros::<u32>(ASCII_BINS, "histo")?;
    let length = bytes as u32;
    let shape = LaunchShape::linear(1024, 256);
    let repetitions = 10;
    let mut rows = Vec::new();
    let copy_ms = device
        .time_device_copy_ms(bytes as usize, repetitions)?
        .ok_or_else(|| HarnessError::Invalid("the device copy could not be timed".into()))?;
    for name in ["histogram-global-atomics", "histogram-shared"] {
        line.set_message(format!("{name}: checking, then timing"));
        let variant = crate::variant(name);
        device.clear(&mut histo)?;
        device.launch(
            &variant.kernel,
            shape,
            &[(&text_buffer).into(), length.into(), (&histo).into()],
        )?;
        let check = compare_exact(&device.download(&histo)?, &want);
        if !check.is_match() {
            return Err(HarnessError::Invalid(format!(
                "{name} is wrong on the timing input: {check}"
            )));
        }
        let kernel = variant.kernel;
        let ms = device
            .time_ms(repetitions, |device| {
                device.launch_async(
                    &kernel,
                    shape,
                    &[(&text_buffer).into(), length.into(), (&histo).into()],
                )
            })?
            .unwrap_or(f64::NAN);
        rows.push((format!("GPU {name} ({shape})"), ms));
    }
    let gb = bytes as f64 / 1e9;
    let mut lines = vec![
        ("CPU plain loop (one core)".to_string(), cpu_loop_ms),
        (
            "CPU idiomatic iterator (one core)".to_string(),
            cpu_idiomatic_ms,
        ),
    ];
    lines.extend(rows);
    lines.push((
        format!("GPU device-to-device copy of the {bytes} bytes"),
        copy_ms,
    ));
    let table_rows = lines.iter().map(|(name, ms)| {
        vec![
            name.clone(),
            format!("{ms:.3}"),
            format!("{:.1}", gb / (ms / 1e3)),
            format!("{:.2}", ms / copy_ms),
        ]
    });
    say(
        page,
        &table(
            &["what", "ms", "input GB/s", "time ÷ copy time"],
            table_rows,
        ),
    );
    say(
        page,
        "every GPU result above was checked against the CPU first; the copy reads and writes the same bytes in the same run",
    );
    line.finish_and_clear();
    flush(page, out)?;

    blocks_sweep(device, &text_buffer, &mut histo, length, options, page)?;
    Ok(Some(Timed {
        copy_ms,
        text: text_buffer,
        text_host: text,
        ascii_want: want,
    }))
}

/// Times `kernel` on `input` after checking its histogram against `want`.
fn check_and_time_bytes(
    device: &mut Device,
    variant: &Ch4Variant,
    shape: LaunchShape,
    input: &harness::Buffer<u8>,
    histo: &mut harness::Buffer<u32>,
    want: &[u32],
) -> Result<f64> {
    crate::check_byte_histogram_shape(variant, shape)?;
    let length = u32::try_from(input.len()).unwrap_or(u32::MAX);
    let kernel = variant.kernel;
    device.clear(histo)?;
    device.launch(
        &kernel,
        shape,
        &[input.into(), length.into(), (&*histo).into()],
    )?;
    let check = compare_exact(&device.download(histo)?, want);
    if !check.is_match() {
        return Err(HarnessError::Invalid(format!(
            "{} is wrong on the timing input: {check}",
            variant.name
        )));
    }
    Ok(device
        .time_ms(REPETITIONS, |device| {
            device.launch_async(
                &kernel,
                shape,
                &[input.into(), length.into(), (&*histo).into()],
            )
        })?
        .unwrap_or(f64::NAN))
}

/// Timed launches per row of the climb, after one warm-up.
pub const REPETITIONS: u32 = 10;

/// The 256-bin histogram's climb to the copy's byte rate, on random bytes and on the text,
/// and what skew costs global and shared atomics.
fn climb_section(
    device: &mut Device,
    options: &Options,
    timed: Option<Timed>,
    page: &mut String,
    out: &mut dyn Write,
) -> Result<()> {
    say(page, "## Climb — how fast can it go");
    let Some(Timed {
        copy_ms,
        text,
        text_host,
        ascii_want,
    }) = timed
    else {
        say(
            page,
            &timing_skipped(
                "the 256-bin histogram's climb on random bytes and on the text, each step's byte rate as a fraction of the copy's, with a bar chart",
            ),
        );
        return Ok(());
    };
    let bytes = text.len();
    let line = working("drawing random bytes and counting them on the CPU");
    let random_host = random_bytes(bytes, options.seed);
    let random = device.upload(&random_host, "random bytes")?;
    let want_random = histogram_on_every_core(&random_host, byte_histogram);
    let want_text = histogram_on_every_core(&text_host, byte_histogram);
    line.finish_and_clear();
    let mut histo = device.zeros::<u32>(BYTE_BINS, "histo")?;
    // The copy reads and writes every byte: its rate counts both.
    let copy_rate = 2.0 * bytes as f64 / copy_ms;
    say(
        page,
        &format!(
            "{bytes} bytes, random and {} repeated; the copy of them: {copy_ms:.3} ms, {:.1} GB/s read + written",
            options.text_name,
            copy_rate / 1e6
        ),
    );
    flush(page, out)?;

    let wide = LaunchShape::linear(1024, 256);
    let mut steps: Vec<(String, String, LaunchShape)> = BYTE_HISTOGRAM_CLIMB
        .iter()
        .map(|&name| (name.to_string(), file_number(crate::variant(name)), wide))
        .collect();
    let last = crate::variant(BYTE_HISTOGRAM_CLIMB[BYTE_HISTOGRAM_CLIMB.len() - 1]);
    if let Some(blocks) = device.resident_blocks(&last.kernel, 256, 0)? {
        steps.push((
            last.name.to_string(),
            format!("{} + grid", file_number(last)),
            LaunchShape::linear(blocks, 256),
        ));
    }
    // The chapter's exercise: half the shared memory of the lane copies, on the same grid.
    let pairs = crate::variant("histogram-bytes-lane-pairs");
    if let Some(blocks) = device.resident_blocks(&pairs.kernel, 256, 0)? {
        steps.push((
            pairs.name.to_string(),
            format!("{} + grid", file_number(pairs)),
            LaunchShape::linear(blocks, 256),
        ));
    }
    let bar = progress(steps.len() as u64, "histogram climb");
    let mut rows = Vec::new();
    let mut bars = Vec::new();
    for (name, step, shape) in &steps {
        let variant = crate::variant(name);
        let random_ms =
            check_and_time_bytes(device, variant, *shape, &random, &mut histo, &want_random)?;
        let text_ms = check_and_time_bytes(device, variant, *shape, &text, &mut histo, &want_text)?;
        let rate = |ms: f64| bytes as f64 / ms;
        rows.push(vec![
            step.clone(),
            name.clone(),
            shape.to_string(),
            format!("{random_ms:.3}"),
            format!("{:.1}", rate(random_ms) / 1e6),
            format!("{:.2}", rate(random_ms) / copy_rate),
            format!("{text_ms:.3}"),
            format!("{:.2}", rate(text_ms) / copy_rate),
        ]);
        bars.push((format!("{step} {name}"), rate(random_ms) / copy_rate));
        bar.inc(1);
    }
    bar.finish_and_clear();
    let climb = table(
        &[
            "step",
            "variant",
            "launch",
            "random ms",
            "random GB/s",
            "÷ copy's GB/s",
            "text ms",
            "text ÷ copy's GB/s",
        ],
        rows,
    );
    say(page, &climb);

    let contention = with_progress("contention: checking, then timing", |_| {
        let text = (&text, text_host.as_slice(), ascii_want.as_slice());
        contention_lines(device, text, &want_text, options, &mut histo)
    })?;
    for line in &contention {
        say(page, line);
    }
    let plot = options.out.join("climb.svg");
    climb_svg(
        &plot,
        &format!("256-bin histogram of random bytes on {}", device.name()),
        "input bytes per second ÷ the device copy's byte rate, same run",
        &bars,
    )?;
    say(page, &format!("plot: {}", plot.display()));
    let file = write_gpu_markdown(
        &options.out.join("climb_table.md"),
        device.name(),
        "ch4-atomics --backend cuda",
        &format!(
            "{bytes} bytes of uniformly random bytes (seed {}) and of the built-in text repeated; {REPETITIONS} timed launches after one warm-up, CUDA events; each rate counts the bytes read once, the copy's ({:.1} GB/s) the bytes read and written",
            options.seed,
            copy_rate / 1e6
        ),
        &format!(
            "{climb}

{}",
            contention.join(
                "

"
            )
        ),
    )?;
    say(page, &format!("climb for the book: {}", file.display()));
    Ok(())
}

/// How skewed the text is, and what that skew costs global atomics: the ASCII global-atomics
/// kernel on the text against the same kernel on uniformly random 7-bit bytes, which make
/// exactly as many atomics spread evenly over the 128 bins.
/// `text` is the text on the device, on the host, and its ASCII histogram; `counts` its byte
/// histogram.
fn contention_lines(
    device: &mut Device,
    (text, text_host, text_ascii): (&harness::Buffer<u8>, &[u8], &[u32]),
    counts: &[u32],
    options: &Options,
    histo: &mut harness::Buffer<u32>,
) -> Result<Vec<String>> {
    let share = |byte: u8| 100.0 * f64::from(counts[usize::from(byte)]) / text_host.len() as f64;
    let mut ascii_host = random_bytes(text_host.len(), options.seed ^ 0xa5c11);
    {
        use rayon::prelude::*;
        ascii_host.par_iter_mut().for_each(|byte| *byte &= 0x7f);
    }
    let ascii = device.upload(&ascii_host, "random ASCII")?;
    let global = crate::variant("histogram-global-atomics");
    let shape = LaunchShape::linear(1024, 256);
    let length = u32::try_from(text_host.len()).unwrap_or(u32::MAX);
    let mut ms = Vec::new();
    for (input, want) in [
        (
            &ascii,
            histogram_on_every_core(&ascii_host, ascii_histogram_loop),
        ),
        (text, text_ascii.to_vec()),
    ] {
        let mut ascii_histo = device.zeros::<u32>(ASCII_BINS, "histo")?;
        device.launch(
            &global.kernel,
            shape,
            &[input.into(), length.into(), (&ascii_histo).into()],
        )?;
        if device.download(&ascii_histo)? != want {
            return Err(HarnessError::Invalid(
                "histogram-global-atomics is wrong on the contention input".into(),
            ));
        }
        device.clear(&mut ascii_histo)?;
        let kernel = global.kernel;
        ms.push(
            device
                .time_ms(3, |device| {
                    device.launch_async(
                        &kernel,
                        shape,
                        &[input.into(), length.into(), (&ascii_histo).into()],
                    )
                })?
                .unwrap_or(f64::NAN),
        );
    }
    device.clear(histo)?;
    Ok(vec![
        format!(
            "skew: ' ' is {:.1}% of the text, 'e' {:.1}%, 't' {:.1}%; a random byte's bin holds {:.2}%",
            share(b' '),
            share(b'e'),
            share(b't'),
            100.0 / BYTE_BINS as f64
        ),
        format!(
            "contention on global atomics: histogram-global-atomics ({shape}, 3 launches) takes {:.3} ms on uniformly random 7-bit bytes and {:.3} ms on the text, {:.1} times as long: same count of atomics, fewer addresses",
            ms[0],
            ms[1],
            ms[1] / ms[0]
        ),
    ])
}

/// The `NN` of a variant's kernel file, `kernels/ch4_atomics/NN_….cu`.
fn file_number(variant: &Ch4Variant) -> String {
    let file = variant.kernel.path.rsplit('/').next().unwrap_or_default();
    file.split('_').next().unwrap_or_default().to_string()
}

fn blocks_sweep(
    device: &mut Device,
    text: &harness::Buffer<u8>,
    histo: &mut harness::Buffer<u32>,
    length: u32,
    options: &Options,
    page: &mut String,
) -> Result<()> {
    let variant = crate::variant("histogram-shared");
    let kernel = variant.kernel;
    let blocks: Vec<u32> = (0..=14).map(|power| 1u32 << power).collect();
    let bar = progress(blocks.len() as u64, "blocks-per-grid sweep");
    let mut points = Vec::new();
    let mut launches = Vec::new();
    for &count in &blocks {
        let shape = LaunchShape::linear(count, 256);
        let timing = device.time_within(SWEEP_REPETITIONS, SWEEP_BUDGET_MS, |device| {
            device.launch_async(
                &kernel,
                shape,
                &[text.into(), length.into(), (&*histo).into()],
            )
        })?;
        points.push((f64::from(count), timing.map_or(f64::NAN, |t| t.ms)));
        launches.push(timing.map_or(0, |t| t.calls));
        bar.inc(1);
    }
    bar.finish_and_clear();
    device.clear(histo)?;
    let best = points
        .iter()
        .enumerate()
        .min_by(|a, b| a.1.1.total_cmp(&b.1.1))
        .map_or(0, |(index, _)| index);
    let rows = points.iter().enumerate().map(|(index, &(count, ms))| {
        vec![
            format!("{count:.0}"),
            format!("{ms:.3}"),
            launches[index].to_string(),
            if index == best {
                "← fastest".to_string()
            } else {
                String::new()
            },
        ]
    });
    say(
        page,
        &format!(
            "blocks-per-grid sweep of {} with 256 threads per block (mean of up to {SWEEP_REPETITIONS} launches after a warm-up, as many as fit in {SWEEP_BUDGET_MS:.0} ms; a launch that takes longer is timed once, its warm-up the measurement):",
            variant.name
        ),
    );
    say(page, &table(&["blocks", "ms", "timed launches", ""], rows));
    let plot = options.out.join("blocks_sweep.svg");
    sweep_svg(
        &plot,
        "histogram-shared: time against blocks per grid",
        "blocks per grid",
        "ms",
        &points,
        best,
    )?;
    say(page, &format!("plot: {}", plot.display()));
    Ok(())
}

/// `text` over and over, cut at `bytes`: copies of the whole text, a memcpy each, rather than
/// a byte at a time, since the timing input is a GiB.
fn repeat_to(text: &[u8], bytes: usize) -> Vec<u8> {
    if text.is_empty() {
        return vec![b' '; bytes];
    }
    let mut repeated = Vec::with_capacity(bytes);
    while repeated.len() < bytes {
        let take = text.len().min(bytes - repeated.len());
        repeated.extend_from_slice(&text[..take]);
    }
    repeated
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_text_repeats_whole_and_is_cut_at_the_size() {
        assert_eq!(repeat_to(b"abc", 8), b"abcabcab");
        assert_eq!(repeat_to(b"abc", 2), b"ab");
        assert_eq!(repeat_to(b"", 3), b"   ");
        let long = repeat_to(DEFAULT_TEXT, 3 * DEFAULT_TEXT.len() + 7);
        let cycled: Vec<u8> = DEFAULT_TEXT
            .iter()
            .copied()
            .cycle()
            .take(long.len())
            .collect();
        assert_eq!(long, cycled);
    }
}
