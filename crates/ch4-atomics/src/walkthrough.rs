//! `cargo run -p ch4-atomics`: the chapter in teaching order, on whichever backend is chosen.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Instant;

use harness::rand::Rng;
use harness::report::{grouped_bars_svg, progress, sweep_svg, table};
use harness::verify::compare_exact;
use harness::walk::{
    checker_section, flush, heading, opening, repeated_launches, say, selected, timing_skipped,
};
use harness::{Device, Expect, HarnessError, LaunchShape, Result};

use crate::{
    ASCII_BINS, Ch4Variant, INCREMENT_SHAPE, Step, VARIANTS, ascii_histogram_idiomatic,
    ascii_histogram_loop, histogram_loop, run_any_bins_histogram, run_ascii_histogram,
    run_increment,
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
        match variant.kind {
            Step::Increment => increment_step(device, variant, &mut page)?,
            Step::AsciiHistogram => ascii_step(device, variant, text, options, &mut page)?,
            Step::AnyBinsHistogram => any_bins_step(device, variant, options.seed, &mut page)?,
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

fn increment_step(device: &mut Device, variant: &Ch4Variant, page: &mut String) -> Result<()> {
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
    grouped_bars_svg(
        path,
        &format!(
            "Letters of {}",
            text_name.split(' ').next().unwrap_or(text_name)
        ),
        &labels,
        &[("lowercase", lower), ("uppercase", upper)],
        "count",
    )
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
            &timing_skipped("the timing table and the blocks-per-grid sweep"),
        );
        return Ok(());
    }
    let bytes = options.timing_bytes.clamp(1, MAX_TIMING_BYTES);
    let text = repeat_to(&options.text, bytes as usize);
    say(
        page,
        &format!("input: {} repeated to {bytes} bytes", options.text_name),
    );
    flush(page, out)?;

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
    flush(page, out)?;

    blocks_sweep(device, &text_buffer, &mut histo, length, options, page)
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
    for &count in &blocks {
        let shape = LaunchShape::linear(count, 256);
        let ms = device
            .time_ms(5, |device| {
                device.launch_async(
                    &kernel,
                    shape,
                    &[text.into(), length.into(), (&*histo).into()],
                )
            })?
            .unwrap_or(f64::NAN);
        points.push((f64::from(count), ms));
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
            "blocks-per-grid sweep of {} with 256 threads per block:",
            variant.name
        ),
    );
    say(page, &table(&["blocks", "ms", ""], rows));
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

fn repeat_to(text: &[u8], bytes: usize) -> Vec<u8> {
    if text.is_empty() {
        return vec![b' '; bytes];
    }
    text.iter().copied().cycle().take(bytes).collect()
}
