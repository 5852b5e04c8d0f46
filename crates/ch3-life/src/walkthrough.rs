//! `cargo run -p ch3-life`: the chapter in teaching order, on whichever backend is chosen.

use std::io::Write;
use std::path::PathBuf;
use std::time::Instant;

use harness::report::{climb_svg, table, write_gpu_markdown, write_gpu_table};
use harness::walk::{
    adversarial_seed, checker_section, flush, heading, opening, say, selected, timing_skipped,
    with_progress,
};
use harness::{Device, Finding, HarnessError, LaunchShape, Result, Schedule};

use crate::{
    Board, Ch3Variant, HALO, HALO_INNER, LIFE_CLIMB, Outcome, Pattern, STEP_BLOCK, STRIP, Step,
    TILE, VARIANTS, WORD_CELLS, image, launch_async, launch_packed_async, launch_shape, pack, run,
    unpack,
};

/// Share of cells alive on a random board: dense enough to churn for hundreds of generations.
pub const DENSITY: f64 = 0.35;
/// Side of the square board the GPU timing runs on by default: 64 Mi cells, 64 MiB a board.
pub const DEFAULT_TIMING_SIDE: u32 = 8192;
/// Largest `--size`: 2^30 cells, a GiB a board, and two boards on the GPU at once.
pub const MAX_TIMING_SIDE: u32 = 32_768;
/// Timed launches per row of the GPU table, after one warm-up.
pub const REPETITIONS: u32 = 10;
/// Generations between the frames of the glider-gun image, and how many frames after the first.
const GUN_FRAME_EVERY: u32 = 30;
const GUN_FRAMES: u32 = 4;

#[derive(Debug, Clone)]
pub struct Options {
    pub seed: u64,
    pub variant: Option<String>,
    /// Side of the square board of the GPU timing table.
    pub timing_side: u32,
    pub out: PathBuf,
}

impl Options {
    pub fn new(seed: u64, out: PathBuf) -> Self {
        Self {
            seed,
            variant: None,
            timing_side: DEFAULT_TIMING_SIDE,
            out,
        }
    }
}

/// The boards the steps run: small on the emulator, where every thread-instruction is
/// interpreted and checked; large enough on a GPU that its blocks cannot all run at once.
#[derive(Debug, Clone, Copy)]
struct Sizes {
    /// Side of the random board the broken kernels are shown failing on.
    broken: u32,
    /// Generations the multi-block loop runs in its one launch.
    multi_block_generations: u32,
}

impl Sizes {
    fn for_device(device: &Device) -> Self {
        if device.kind().is_cuda() {
            Self {
                broken: 1024,
                multi_block_generations: 100,
            }
        } else {
            Self {
                broken: 32,
                multi_block_generations: 16,
            }
        }
    }
}

/// The Gosper glider gun near the top-left corner of a 64 × 48 board, with room for four
/// gliders before the first one wraps around into the gun.
pub fn glider_gun_board() -> Result<Board> {
    Ok(Board::dead(64, 48)?.with(&Pattern::gosper_glider_gun(), 1, 1))
}

/// Writes the walk-through to `out`; images go to `options.out`.
pub fn walkthrough(device: &mut Device, options: &Options, out: &mut dyn Write) -> Result<()> {
    let mut page = String::new();
    opening(
        &mut page,
        device,
        &[&format!(
            "seed {} · random boards {:.0}% alive · every board wraps around at its edges (a torus) and is compared with the CPU's, cell for cell · images in {}",
            options.seed,
            DENSITY * 100.0,
            options.out.display()
        )],
        &options.out,
        out,
    )?;

    let sizes = Sizes::for_device(device);
    for (number, variant) in selected(VARIANTS, options.variant.as_deref())? {
        heading(&mut page, number, variant);
        let page = &mut page;
        let findings = with_progress(&format!("{number}. {}", variant.name), |_| {
            match variant.kind {
                Step::DoubleBuffer => double_buffer_step(device, variant, options, page),
                Step::FourCells => four_cells_step(device, variant, options, page),
                Step::InPlace => in_place_step(device, variant, options, sizes, page),
                Step::FloorBlocks => floor_blocks_step(device, variant, options, page),
                Step::SingleBlock => single_block_step(device, variant, options, page),
                Step::MultiBlock => multi_block_step(device, variant, options, sizes, page),
                Step::SharedHalo => shared_halo_step(device, variant, options, page),
                Step::BitPacked | Step::BitPackedStrips => {
                    bit_packed_step(device, variant, options, page)
                }
            }
        })?;
        checker_section(device, variant, &findings, page);
        flush(page, out)?;
    }
    if options.variant.is_none() {
        say(&mut page, "");
        let measured = timing_section(device, options, &mut page)?;
        flush(&mut page, out)?;
        say(&mut page, "");
        climb_section(device, options, measured.as_ref(), &mut page)?;
        flush(&mut page, out)?;
    }
    Ok(())
}

/// The block each bit-packed kernel runs with: 32 words (1,024 cells) across, and 8 rows down
/// for one thread per word, 2 strips of 8 rows down for the strips, the fastest of the shapes
/// tried on an H100.
pub fn bit_packed_block(step: Step) -> (u32, u32) {
    if step == Step::BitPackedStrips {
        (32, 2)
    } else {
        (32, 8)
    }
}

fn bit_packed_step(
    device: &mut Device,
    variant: &Ch3Variant,
    options: &Options,
    page: &mut String,
) -> Result<Vec<Finding>> {
    let gun = glider_gun_board()?;
    let generations = GUN_FRAME_EVERY * GUN_FRAMES;
    let words = pack(&gun)?;
    say(
        page,
        &format!(
            "the glider gun's {} × {} board packs into {} words of {WORD_CELLS} cells, {} a row",
            gun.width(),
            gun.height(),
            words.len(),
            gun.width() / WORD_CELLS
        ),
    );
    let mut findings = run_and_compare(
        device,
        variant,
        (&gun, &gun.after(generations)),
        "the glider gun",
        generations,
        Some(bit_packed_block(variant.kind)),
        page,
    )?;
    let (width, height) = if device.kind().is_cuda() {
        (1024, 1003)
    } else {
        (96, 53)
    };
    let board = random_board(width, height, options.seed)?;
    let generations = 9;
    let want = board.after(generations);
    let label = format!("random {width} × {height} board");
    // Any 2D block, including ones that leave threads past the last word or row.
    findings.extend(run_and_compare(
        device,
        variant,
        (&board, &want),
        &label,
        generations,
        Some((3, 5)),
        page,
    )?);
    adversarial_run(device, options, page, &want, |device| {
        run(
            device,
            variant,
            &board,
            generations,
            Some(bit_packed_block(variant.kind)),
        )
    })?;
    if variant.kind == Step::BitPackedStrips {
        say(
            page,
            &format!(
                "each thread walks down {STRIP} rows, loading three words a row and summing each row once for the three outputs that need it: {} loads per output word, where step-bit-packed makes 9",
                3.0 * f64::from(STRIP + 2) / f64::from(STRIP)
            ),
        );
    }
    let narrow = random_board(100, 8, options.seed)?;
    if let Err(error) = run(
        device,
        variant,
        &narrow,
        1,
        Some(bit_packed_block(variant.kind)),
    ) {
        say(page, &format!("a 100 × 8 board is refused: {error}"));
    }
    Ok(findings)
}

fn describe_launches(outcome: &Outcome, generations: u32) -> String {
    let launches = match outcome.launches {
        1 => "in one launch".to_string(),
        n => format!("in {n} launches"),
    };
    let plural = if generations == 1 { "" } else { "s" };
    format!(
        "{} · {generations} generation{plural} {launches}",
        outcome.shape
    )
}

/// Runs `generations` from `start`, says "`label`, grid · generations: how the result compares
/// with `want`", and returns the checkers' findings.
fn run_and_compare(
    device: &mut Device,
    variant: &Ch3Variant,
    (start, want): (&Board, &Board),
    label: &str,
    generations: u32,
    block: Option<(u32, u32)>,
    page: &mut String,
) -> Result<Vec<Finding>> {
    let outcome = run(device, variant, start, generations, block)?;
    say(
        page,
        &format!(
            "{label}, {}: {}",
            describe_launches(&outcome, generations),
            outcome.board.diff(want)
        ),
    );
    Ok(outcome.report.findings)
}

fn random_board(width: u32, height: u32, seed: u64) -> Result<Board> {
    Board::random(width, height, DENSITY, seed)
}

fn double_buffer_step(
    device: &mut Device,
    variant: &Ch3Variant,
    options: &Options,
    page: &mut String,
) -> Result<Vec<Finding>> {
    let gun = glider_gun_board()?;
    say(
        page,
        &format!(
            "the Gosper glider gun on a {} × {} board, one launch per generation, frames every {GUN_FRAME_EVERY} generations:",
            gun.width(),
            gun.height()
        ),
    );
    let mut findings = Vec::new();
    let (frames, last) = frames(device, variant, &gun, GUN_FRAME_EVERY, GUN_FRAMES, page)?;
    findings.extend(last.report.findings);
    let path = options.out.join("glider_gun.png");
    let captions: Vec<String> = (0..=GUN_FRAMES)
        .map(|index| format!("generation {}", index * GUN_FRAME_EVERY))
        .collect();
    image::write_frames_png(
        &path,
        "The Gosper glider gun: a new glider every 30 generations",
        &frames.iter().collect::<Vec<_>>(),
        &captions,
    )?;
    say(
        page,
        &format!(
            "frames: {} (generations {})",
            path.display(),
            frame_generations(GUN_FRAME_EVERY, GUN_FRAMES)
        ),
    );

    // Any 2D block works, including ones that do not divide the board.
    let board = random_board(50, 37, options.seed)?;
    let label = format!("random {} × {} board", board.width(), board.height());
    let generations = 12;
    findings.extend(run_and_compare(
        device,
        variant,
        (&board, &board.after(generations)),
        &label,
        generations,
        Some((32, 4)),
        page,
    )?);
    Ok(findings)
}

/// Boards whose widths leave 1, 2 and 3 cells for the last thread of a row, and one narrower
/// than a thread's six columns.
fn four_cells_step(
    device: &mut Device,
    variant: &Ch3Variant,
    options: &Options,
    page: &mut String,
) -> Result<Vec<Finding>> {
    let mut findings = Vec::new();
    for (width, height) in [(50, 37), (61, 20), (47, 29), (3, 9)] {
        let board = random_board(width, height, options.seed)?;
        let generations = 12;
        findings.extend(run_and_compare(
            device,
            variant,
            (&board, &board.after(generations)),
            &format!(
                "random {width} × {height} board ({width} % 4 = {})",
                width % 4
            ),
            generations,
            Some((32, 4)),
            page,
        )?);
    }
    Ok(findings)
}

/// Runs `board` through `variant` for `count` stretches of `every` generations, comparing each
/// with the CPU; returns the frames (the start included) and the last run.
fn frames(
    device: &mut Device,
    variant: &Ch3Variant,
    board: &Board,
    every: u32,
    count: u32,
    page: &mut String,
) -> Result<(Vec<Board>, Outcome)> {
    let mut frames = vec![board.clone()];
    let mut want = board.clone();
    let mut last = None;
    for index in 1..=count {
        let from = frames.last().cloned().unwrap_or_else(|| board.clone());
        let outcome = run(device, variant, &from, every, None)?;
        want = want.after(every);
        say(
            page,
            &format!(
                "  generation {:>3}: {}",
                index * every,
                outcome.board.diff(&want)
            ),
        );
        frames.push(outcome.board.clone());
        if index == count {
            say(
                page,
                &format!("  each stretch: {}", describe_launches(&outcome, every)),
            );
        }
        last = Some(outcome);
    }
    let last = last.ok_or_else(|| HarnessError::Invalid("no frames were asked for".into()))?;
    Ok((frames, last))
}

fn frame_generations(every: u32, count: u32) -> String {
    (0..=count)
        .map(|index| (index * every).to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

fn in_place_step(
    device: &mut Device,
    variant: &Ch3Variant,
    options: &Options,
    sizes: Sizes,
    page: &mut String,
) -> Result<Vec<Finding>> {
    let side = sizes.broken;
    let board = random_board(side, side, options.seed)?;
    let generations = if device.kind().is_cuda() { 10 } else { 1 };
    let want = board.after(generations);
    let outcome = run(device, variant, &board, generations, None)?;
    say(
        page,
        &format!(
            "random {side} × {side} board, {}",
            describe_launches(&outcome, generations)
        ),
    );
    say(
        page,
        &format!("{}: {}", schedule_name(device), outcome.board.diff(&want)),
    );
    let shown = adversarial_run(device, options, page, &want, |device| {
        run(device, variant, &board, generations, None)
    })?
    .unwrap_or(outcome.board);
    diff_image(
        options,
        "step_in_place.png",
        "step-in-place: one board read and written at once",
        &want,
        &shown,
        page,
    )?;
    Ok(outcome.report.findings)
}

fn floor_blocks_step(
    device: &mut Device,
    variant: &Ch3Variant,
    options: &Options,
    page: &mut String,
) -> Result<Vec<Finding>> {
    let generations = 8;
    let square = random_board(64, 64, options.seed)?;
    let mut findings = run_and_compare(
        device,
        variant,
        (&square, &square.after(generations)),
        "random 64 × 64 board",
        generations,
        None,
        page,
    )?;

    let (width, height) = (70, 40);
    let covered = (width / TILE * TILE, height / TILE * TILE);
    let board = random_board(width, height, options.seed)?;
    let mut last = None;
    for run_generations in [1, generations] {
        let outcome = run(device, variant, &board, run_generations, None)?;
        let want = board.after(run_generations);
        if run_generations == 1 {
            say(
                page,
                &format!("random {width} × {height} board, {}", outcome.shape),
            );
        }
        let diff = outcome.board.diff(&want);
        let outside = outcome
            .board
            .cells()
            .iter()
            .zip(want.cells())
            .enumerate()
            .filter(|&(index, (got, expected))| {
                let (x, y) = (index as u32 % width, index as u32 / width);
                got != expected && (x >= covered.0 || y >= covered.1)
            })
            .count();
        say(
            page,
            &format!(
                "  generation {run_generations}: {diff}; {outside} of them past column {} or row {}, where no block reaches",
                covered.0, covered.1
            ),
        );
        findings.extend(outcome.report.findings);
        last = Some((want, outcome.board));
    }
    say(
        page,
        "the cells no block computes are wrong from the first generation, and their neighbours read them: the error spreads a cell a generation, across the edges too, since the board wraps around",
    );
    if let Some((want, got)) = last {
        diff_image(
            options,
            "step_floor_blocks.png",
            "step-floor-blocks: the cells past the last whole block",
            &want,
            &got,
            page,
        )?;
    }
    Ok(findings)
}

fn single_block_step(
    device: &mut Device,
    variant: &Ch3Variant,
    options: &Options,
    page: &mut String,
) -> Result<Vec<Finding>> {
    let generations = 64;
    let board = random_board(32, 32, options.seed)?;
    let mut findings = run_and_compare(
        device,
        variant,
        (&board, &board.after(generations)),
        "random 32 × 32 board",
        generations,
        None,
        page,
    )?;
    let narrow = random_board(48, 21, options.seed)?;
    findings.extend(run_and_compare(
        device,
        variant,
        (&narrow, &narrow.after(generations)),
        "random 48 × 21 board",
        generations,
        None,
        page,
    )?);
    let gun = glider_gun_board()?;
    if let Err(refused) = run(device, variant, &gun, 1, None) {
        say(page, &format!("the glider gun's board: {refused}"));
    }
    Ok(findings)
}

fn multi_block_step(
    device: &mut Device,
    variant: &Ch3Variant,
    options: &Options,
    sizes: Sizes,
    page: &mut String,
) -> Result<Vec<Finding>> {
    let side = sizes.broken * 2;
    let generations = sizes.multi_block_generations;
    let board = random_board(side, side, options.seed)?;
    let want = board.after(generations);
    let block = if device.kind().is_cuda() {
        (32, 32)
    } else {
        STEP_BLOCK
    };
    let outcome = run(device, variant, &board, generations, Some(block))?;
    say(
        page,
        &format!(
            "random {side} × {side} board, {}",
            describe_launches(&outcome, generations)
        ),
    );
    say(
        page,
        &format!("{}: {}", schedule_name(device), outcome.board.diff(&want)),
    );
    let shown = adversarial_run(device, options, page, &want, |device| {
        run(device, variant, &board, generations, Some(block))
    })?
    .unwrap_or(outcome.board);
    diff_image(
        options,
        "iterate_multi_block.png",
        "iterate-multi-block: __syncthreads() does not wait for other blocks",
        &want,
        &shown,
        page,
    )?;
    Ok(outcome.report.findings)
}

fn shared_halo_step(
    device: &mut Device,
    variant: &Ch3Variant,
    options: &Options,
    page: &mut String,
) -> Result<Vec<Finding>> {
    let gun = glider_gun_board()?;
    let generations = GUN_FRAME_EVERY * GUN_FRAMES;
    let mut findings = run_and_compare(
        device,
        variant,
        (&gun, &gun.after(generations)),
        "the glider gun again",
        generations,
        None,
        page,
    )?;
    let side = if device.kind().is_cuda() { 1000 } else { 50 };
    let board = random_board(side, side + 3, options.seed)?;
    let generations = 21;
    let want = board.after(generations);
    let label = format!("random {} × {} board", board.width(), board.height());
    findings.extend(run_and_compare(
        device,
        variant,
        (&board, &want),
        &label,
        generations,
        None,
        page,
    )?);
    adversarial_run(device, options, page, &want, |device| {
        run(device, variant, &board, generations, None)
    })?;
    say(
        page,
        &format!(
            "each block loads {TILE} × {TILE} cells and writes back its inner {HALO_INNER} × {HALO_INNER}: {:.0}% of its threads compute cells that only feed the halo",
            100.0 * (1.0 - f64::from(HALO_INNER * HALO_INNER) / f64::from(TILE * TILE))
        ),
    );
    Ok(findings)
}

fn schedule_name(device: &Device) -> String {
    match device.emu_settings() {
        Some(settings) => match settings.schedule {
            Schedule::Hardware => "on the emulator's hardware schedule".to_string(),
            Schedule::Random { seed } => format!("on the emulator's random schedule (seed {seed})"),
            Schedule::Adversarial { seed } => {
                format!("on the emulator's adversarial schedule (seed {seed})")
            }
            Schedule::Lanes { seed } => format!("on the emulator's lanes schedule (seed {seed})"),
        },
        None => format!("on the GPU ({})", device.name()),
    }
}

/// On the emulator, when the user has not chosen a schedule, runs `work` once more under the
/// adversarial schedule, where one warp runs ahead until it must wait, and says how it compares
/// with `want`. Returns that board.
fn adversarial_run(
    device: &mut Device,
    options: &Options,
    page: &mut String,
    want: &Board,
    work: impl FnOnce(&mut Device) -> Result<Outcome>,
) -> Result<Option<Board>> {
    let Some(seed) = adversarial_seed(device, options.seed) else {
        return Ok(None);
    };
    let board = device
        .with_schedule(Schedule::Adversarial { seed }, work)?
        .board;
    say(
        page,
        &format!(
            "on the adversarial schedule (seed {seed}), where a warp runs ahead until it must wait: {}",
            board.diff(want)
        ),
    );
    Ok(Some(board))
}

fn diff_image(
    options: &Options,
    file: &str,
    title: &str,
    want: &Board,
    got: &Board,
    page: &mut String,
) -> Result<()> {
    if got == want {
        return Ok(());
    }
    let path = options.out.join(file);
    image::write_diff_png(&path, title, want, got)?;
    say(
        page,
        &format!(
            "image: {} (left the CPU's board, right the kernel's: red alive where it should be dead, pink dead where it should be alive)",
            path.display()
        ),
    );
    Ok(())
}

/// One row of the GPU table.
#[derive(Debug)]
struct Timed {
    what: String,
    /// Milliseconds per generation.
    ms: f64,
    cells: u64,
    /// Whether it ran on the board the copy moved, so that the ratio means something.
    on_copied_board: bool,
    /// The variant and launch, for the climb that reads the same measurements.
    variant: Option<&'static str>,
    shape: Option<LaunchShape>,
}

impl Timed {
    fn plain(what: String, ms: f64, cells: u64) -> Self {
        Self {
            what,
            ms,
            cells,
            on_copied_board: true,
            variant: None,
            shape: None,
        }
    }
}

/// The timing section's measurements, which the climb reads.
struct Measured {
    rows: Vec<Timed>,
    side: u32,
    /// A copy of the bit-packed board, `side² / 8` bytes: the bit-packed kernels' roofline.
    packed_copy_ms: f64,
}

fn timing_section(
    device: &mut Device,
    options: &Options,
    page: &mut String,
) -> Result<Option<Measured>> {
    say(page, "## GPU timing");
    if !device.kind().is_cuda() {
        say(
            page,
            &timing_skipped(
                "cell updates per second of each fixed kernel against a device-to-device copy of the board",
            ),
        );
        return Ok(None);
    }
    let side = options.timing_side;
    let (rows, copy_ms) = with_progress("checking and timing", |_| {
        measure(device, options.seed, side)
    })?;
    let rendered = render(&rows, copy_ms);
    say(page, &rendered);
    say(
        page,
        &format!(
            "ms per generation: mean of {REPETITIONS} timed launches after a warm-up (CUDA events), divided by the generations per launch; every kernel's board was checked against the CPU's first; the copy moves one board's bytes in the same run, as a generation reads one board and writes the other"
        ),
    );
    let file = write_gpu_table(
        &options.out,
        device.name(),
        "ch3-life --backend cuda",
        &format!(
            "{side} × {side} board; {REPETITIONS} timed launches after one warm-up, CUDA events; the CPU row on one core of the same host"
        ),
        &rendered,
    )?;
    say(page, &format!("table for the book: {}", file.display()));
    let packed_bytes = (u64::from(side) * u64::from(side) / 8) as usize;
    let packed_copy_ms = device
        .time_device_copy_ms(packed_bytes, REPETITIONS)?
        .unwrap_or(f64::NAN);
    Ok(Some(Measured {
        rows,
        side,
        packed_copy_ms,
    }))
}

/// Life's climb on the timing board: the timing section's own measurements of the climb's
/// kernels as multiples of the double buffer's cell rate, and the bit-packed kernels' roofline.
fn climb_section(
    device: &Device,
    options: &Options,
    measured: Option<&Measured>,
    page: &mut String,
) -> Result<()> {
    say(page, "## Climb — how fast can it go");
    let Some(Measured {
        rows,
        side,
        packed_copy_ms,
    }) = measured
    else {
        say(
            page,
            &timing_skipped(
                "the climb to bit-packed boards, each kernel's cell rate as a multiple of the double buffer's, with a bar chart and the bit-packed kernels' roofline",
            ),
        );
        return Ok(());
    };
    let steps: Vec<&Timed> = LIFE_CLIMB
        .iter()
        .filter_map(|&name| {
            rows.iter()
                .find(|row| row.variant == Some(name) && row.on_copied_board)
        })
        .collect();
    let Some(base) = steps.first() else {
        return Err(HarnessError::Invalid(
            "the timing table has no step-double-buffer row".into(),
        ));
    };
    let rate = |row: &Timed| row.cells as f64 / (row.ms / 1e3);
    let base_rate = rate(base);
    let table_rows = steps.iter().map(|row| {
        let name = row.variant.unwrap_or_default();
        vec![
            file_number(crate::variant(name)),
            name.to_string(),
            row.shape.map(|shape| shape.to_string()).unwrap_or_default(),
            format!("{:.4}", row.ms),
            format!("{:.1}", rate(row) / 1e9),
            format!("{:.1}", rate(row) / base_rate),
        ]
    });
    let climb = table(
        &[
            "step",
            "variant",
            "launch",
            "ms per generation",
            "G cell updates/s",
            "× step-double-buffer",
        ],
        table_rows,
    );
    say(page, &climb);
    let packed_bytes = f64::from(*side) * f64::from(*side) / 8.0;
    // A copy reads and writes the packed board once; so does a generation, at best.
    let copy_rate = 2.0 * packed_bytes / (packed_copy_ms / 1e3);
    let bytes_per_cell = 2.0 / 8.0;
    let roofline = format!(
        "roofline of the bit-packed kernels: a generation must read each cell's bit and write it, {bytes_per_cell} bytes per cell update; a copy of the {} × {} packed board ({:.0} bytes, {packed_copy_ms:.4} ms, {:.1} GB/s read + written, in the same run) bounds them at {:.0} G cell updates/s",
        side,
        side,
        packed_bytes,
        copy_rate / 1e9,
        copy_rate / bytes_per_cell / 1e9
    );
    say(page, &roofline);
    let plot = options.out.join("climb.svg");
    let bars: Vec<(String, f64)> = steps
        .iter()
        .map(|row| {
            let name = row.variant.unwrap_or_default();
            (
                format!("{} {name}", file_number(crate::variant(name))),
                rate(row) / base_rate,
            )
        })
        .collect();
    climb_svg(
        &plot,
        &format!("Life, {side} × {side} board, on {}", device.name()),
        "cell updates per second ÷ step-double-buffer's, same run",
        &bars,
    )?;
    say(page, &format!("plot: {}", plot.display()));
    let file = write_gpu_markdown(
        &options.out.join("climb_table.md"),
        device.name(),
        "ch3-life --backend cuda",
        &format!(
            "{side} × {side} board, {:.0}% alive; {REPETITIONS} timed launches after one warm-up, CUDA events; every board checked against the CPU's first",
            DENSITY * 100.0
        ),
        &format!(
            "{climb}

{roofline}"
        ),
    )?;
    say(page, &format!("climb for the book: {}", file.display()));
    Ok(())
}

/// The `NN` of a variant's kernel file, `kernels/ch3_life/NN_….cu`.
fn file_number(variant: &Ch3Variant) -> String {
    let file = variant.kernel.path.rsplit('/').next().unwrap_or_default();
    file.split('_').next().unwrap_or_default().to_string()
}

/// Checks, then times, the fixed kernels on a `side × side` board, and the one-block loop
/// against one launch per generation on the largest board one block holds: rows of
/// milliseconds per generation, and the copy's milliseconds (NaN on the emulator).
fn measure(device: &mut Device, seed: u64, side: u32) -> Result<(Vec<Timed>, f64)> {
    let board = Board::random(side, side, DENSITY, seed)?;
    let started = Instant::now();
    let next = board.step();
    let cpu_ms = started.elapsed().as_secs_f64() * 1e3;
    let mut rows = vec![Timed::plain(
        "CPU reference (one core, written for clarity)".to_string(),
        cpu_ms,
        board.cell_count(),
    )];
    rows.push(time_variant(
        device,
        "step-double-buffer",
        &board,
        1,
        &next,
    )?);
    // The chapter's exercise: four cells a thread, on the same board.
    rows.push(time_variant(device, "step-four-cells", &board, 1, &next)?);
    let after_halo = next.after(HALO - 1);
    rows.push(time_variant(
        device,
        "iterate-shared-halo",
        &board,
        HALO,
        &after_halo,
    )?);
    if board.width().is_multiple_of(WORD_CELLS) {
        for name in ["step-bit-packed", "step-bit-packed-strips"] {
            rows.push(time_bit_packed(device, name, &board, &next)?);
        }
    }

    let small = Board::random(32, 32, DENSITY, seed)?;
    let mut row = time_variant(device, "step-double-buffer", &small, 1, &small.step())?;
    row.on_copied_board = false;
    rows.push(row);
    let generations = 1000;
    let mut row = time_variant(
        device,
        "iterate-single-block",
        &small,
        generations,
        &small.after(generations),
    )?;
    row.on_copied_board = false;
    rows.push(row);

    let copy_ms = device
        .time_device_copy_ms(board.cells().len(), REPETITIONS)?
        .unwrap_or(f64::NAN);
    rows.push(Timed::plain(
        format!(
            "GPU device-to-device copy of the {side} × {side} board ({} bytes)",
            board.cell_count()
        ),
        copy_ms,
        board.cell_count(),
    ));
    Ok((rows, copy_ms))
}

/// One generation of a bit-packed kernel on `board`, checked against `want`, then timed over
/// [`REPETITIONS`] launches.
fn time_bit_packed(device: &mut Device, name: &str, board: &Board, want: &Board) -> Result<Timed> {
    let variant = crate::variant(name);
    let size = (board.width(), board.height());
    let shape = launch_shape(
        variant,
        size.0,
        size.1,
        Some(bit_packed_block(variant.kind)),
    )?;
    let first = device.upload(&pack(board)?, "words_a")?;
    let second = device.zeros::<u32>(first.len(), "words_b")?;
    let boards = (&first, &second);
    let words = (size.0 / WORD_CELLS, size.1);
    launch_packed_async(device, variant, shape, boards, words)?;
    let got = unpack(size.0, size.1, &device.download(&second)?)?;
    let diff = got.diff(want);
    if !diff.is_match() {
        return Err(HarnessError::Invalid(format!(
            "{name} is wrong on the {} × {} timing board: {diff}",
            size.0, size.1
        )));
    }
    let ms = device
        .time_ms(REPETITIONS, |device| {
            launch_packed_async(device, variant, shape, boards, words)
        })?
        .unwrap_or(f64::NAN);
    Ok(Timed {
        what: format!(
            "GPU {name}, {} × {} board ({shape}, 1 generation a launch)",
            size.0, size.1
        ),
        ms,
        cells: board.cell_count(),
        on_copied_board: true,
        variant: Some(variant.name),
        shape: Some(shape),
    })
}

/// One launch of `generations` generations of `name` on `board`, checked against `want`, then
/// timed over [`REPETITIONS`] launches.
fn time_variant(
    device: &mut Device,
    name: &str,
    board: &Board,
    generations: u32,
    want: &Board,
) -> Result<Timed> {
    let variant = crate::variant(name);
    let size = (board.width(), board.height());
    let shape = launch_shape(variant, size.0, size.1, None)?;
    let first = device.upload(board.cells(), "board_a")?;
    let second = device.zeros::<u8>(board.cells().len(), "board_b")?;
    let boards = (&first, &second);
    launch_async(device, variant, shape, boards, size, generations)?;
    // The one-block loop leaves its result in `board`; the others write the second board.
    let result = if variant.kind == Step::SingleBlock {
        &first
    } else {
        &second
    };
    let got = Board::from_cells(size.0, size.1, device.download(result)?)?;
    let diff = got.diff(want);
    if !diff.is_match() {
        return Err(HarnessError::Invalid(format!(
            "{name} is wrong on the {} × {} timing board: {diff}",
            size.0, size.1
        )));
    }
    let ms = device
        .time_ms(REPETITIONS, |device| {
            launch_async(device, variant, shape, boards, size, generations)
        })?
        .unwrap_or(f64::NAN);
    let per_launch = if generations == 1 {
        "1 generation a launch".to_string()
    } else {
        format!("{generations} generations a launch")
    };
    Ok(Timed {
        what: format!(
            "GPU {name}, {} × {} board ({shape}, {per_launch})",
            size.0, size.1
        ),
        ms: ms / f64::from(generations),
        cells: board.cell_count(),
        on_copied_board: true,
        variant: Some(variant.name),
        shape: Some(shape),
    })
}

fn render(rows: &[Timed], copy_ms: f64) -> String {
    let table_rows = rows.iter().map(|row| {
        vec![
            row.what.clone(),
            format!("{:.4}", row.ms),
            format!("{:.2}", row.cells as f64 / (row.ms / 1e3) / 1e9),
            if row.on_copied_board {
                format!("{:.2}", row.ms / copy_ms)
            } else {
                "—".to_string()
            },
        ]
    });
    table(
        &[
            "what",
            "ms per generation",
            "G cell updates/s",
            "time ÷ copy time",
        ],
        table_rows,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The GPU table's checks and launches, run on the emulator (which times nothing), so the
    /// cuda path runs the same verified code.
    #[test]
    fn the_timing_rows_are_checked_and_rendered() {
        let mut device = Device::open(harness::BackendChoice::Emu).unwrap();
        let (rows, copy_ms) = measure(&mut device, 3, 64).unwrap();
        assert!(copy_ms.is_nan());
        let names: Vec<&str> = rows.iter().map(|row| row.what.as_str()).collect();
        assert_eq!(rows.len(), 9, "{names:?}");
        assert!(
            names[1].contains("step-double-buffer, 64 × 64")
                && names[2].contains("step-four-cells, 64 × 64")
                && names[3].contains("4 generations a launch")
                && names[4].contains("step-bit-packed, 64 × 64 board ((1, 8) blocks × (32, 8)")
                && names[5].contains("step-bit-packed-strips, 64 × 64 board ((1, 4) blocks")
                && names[7].contains("iterate-single-block, 32 × 32"),
            "{names:?}"
        );
        let climb: Vec<_> = rows
            .iter()
            .filter(|row| row.on_copied_board)
            .filter_map(|row| row.variant)
            .filter(|&name| name != "step-four-cells")
            .collect();
        assert_eq!(climb, LIFE_CLIMB);
        assert!(!rows[6].on_copied_board && rows[8].on_copied_board);
        // a width no word divides: no bit-packed rows, the rest as before
        let (rows, _) = measure(&mut device, 3, 40).unwrap();
        assert_eq!(rows.len(), 7);
        let timed = |what: &str, ms: f64, on_copied_board| Timed {
            on_copied_board,
            ..Timed::plain(what.into(), ms, 8_000_000)
        };
        let rows = [
            timed("GPU step", 2.0, true),
            timed("copy", 1.0, true),
            timed("small", 1.0, false),
        ];
        let text = render(&rows, 1.0);
        let lines: Vec<&str> = text.lines().collect();
        assert!(
            lines[2].contains("| 2.0000")
                && lines[2].contains("| 4.00")
                && lines[2].contains("| 2.00"),
            "{text}"
        );
        assert!(
            lines[3].contains("| 8.00") && lines[3].contains("| 1.00"),
            "{text}"
        );
        assert!(lines[4].ends_with("| —                |"), "{text}");
    }

    #[test]
    fn frames_name_their_generations() {
        assert_eq!(frame_generations(30, 4), "0, 30, 60, 90, 120");
    }
}
