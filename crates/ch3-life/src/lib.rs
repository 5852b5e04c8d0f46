//! Chapter 3: Conway's Game of Life on a torus: 2D grids, wraparound, double buffering,
//! block-level barriers and shared-memory halos.
//!
//! Every variant in [`VARIANTS`] is one kernel file in `kernels/ch3_life/`, in teaching
//! order; the walk-through, the tests and the book all read this list. Life is integer
//! arithmetic, so every board is compared with the CPU's cell for cell, exactly.

use harness::{Arg, Buffer, Device, Dim3, Expect, HarnessError, LaunchReport, LaunchShape, Result};
use harness::{Variant, kernel};

pub mod board;
#[cfg(feature = "walkthrough")]
pub mod image;
pub mod stencil;
#[cfg(feature = "testing")]
pub mod testing;
#[cfg(feature = "walkthrough")]
pub mod walkthrough;

pub use board::{Board, BoardDiff, MAX_CELLS, MAX_SIDE, Pattern};

/// The block the one-generation kernels use unless told otherwise.
pub const STEP_BLOCK: (u32, u32) = (16, 16);
/// Side of the square blocks of `step-floor-blocks` and `iterate-shared-halo`.
pub const TILE: u32 = 32;
/// Generations `iterate-shared-halo` computes per launch: the width of the halo it recomputes.
pub const HALO: u32 = 4;
/// The cells each `iterate-shared-halo` block owns along a side: its tile less the halo on both sides.
pub const HALO_INNER: u32 = TILE - 2 * HALO;
/// `iterate-single-block` runs one thread per cell in one block, so the board has at most this many.
pub const SINGLE_BLOCK_MAX_CELLS: u64 = 1024;
/// Cells in each 32-bit word of a bit-packed board: the bit-packed kernels take boards whose
/// width is a multiple of this.
pub const WORD_CELLS: u32 = 32;
/// Rows each thread of `step-bit-packed-strips` walks down.
pub const STRIP: u32 = 8;
/// Cells of a row each thread of `step-four-cells` computes.
pub const FOUR_CELLS: u32 = 4;

/// How a variant is driven, since its kernel's parameters say what it computes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// `kernel(const u8 *in, u8 *out, unsigned width, unsigned height)`, one launch per
    /// generation on any 2D block; the host swaps the boards between launches.
    DoubleBuffer,
    /// `kernel(u8 *board, unsigned width, unsigned height)`, one launch per generation, in place.
    InPlace,
    /// The double buffer's signature, on ⌊width / 32⌋ × ⌊height / 32⌋ blocks of 32 × 32.
    FloorBlocks,
    /// `kernel(u8 *board, u8 *scratch, unsigned generations)`: one launch, one block of
    /// width × height threads.
    SingleBlock,
    /// `kernel(u8 *board, u8 *scratch, unsigned width, unsigned height, unsigned generations)`:
    /// one launch on a grid of any 2D block.
    MultiBlock,
    /// `kernel(const u8 *in, u8 *out, unsigned width, unsigned height, unsigned generations)`:
    /// up to [`HALO`] generations per launch, 32 × 32 blocks each owning 24 × 24 cells.
    SharedHalo,
    /// `kernel(const u32 *in, u32 *out, unsigned words_per_row, unsigned height)` on a
    /// bit-packed board ([`pack`]), one thread per word, one launch per generation, any 2D block.
    BitPacked,
    /// The same signature, one thread per word of [`STRIP`] rows.
    BitPackedStrips,
    /// The double buffer's signature, [`FOUR_CELLS`] cells of a row per thread: the grid covers
    /// ⌈width / 4⌉ threads across, any 2D block.
    FourCells,
}

impl Step {
    /// Whether the caller chooses the block; the other kernels fix it themselves.
    pub fn takes_any_block(self) -> bool {
        matches!(
            self,
            Self::DoubleBuffer
                | Self::InPlace
                | Self::MultiBlock
                | Self::BitPacked
                | Self::BitPackedStrips
                | Self::FourCells
        )
    }

    /// Whether the kernel runs on a bit-packed board, [`WORD_CELLS`] cells a word.
    pub fn is_bit_packed(self) -> bool {
        matches!(self, Self::BitPacked | Self::BitPackedStrips)
    }

    /// How many generations one launch computes at most; `None` when one launch computes all.
    pub fn generations_per_launch(self) -> Option<u32> {
        match self {
            Self::DoubleBuffer
            | Self::InPlace
            | Self::FloorBlocks
            | Self::BitPacked
            | Self::BitPackedStrips
            | Self::FourCells => Some(1),
            Self::SharedHalo => Some(HALO),
            Self::SingleBlock | Self::MultiBlock => None,
        }
    }
}

pub type Ch3Variant = Variant<Step>;

pub const VARIANTS: &[Ch3Variant] = &[
    Variant {
        name: "step-double-buffer",
        kernel: kernel!("ch3_life", "01_step_double_buffer", "life_step"),
        expect: Expect::Correct,
        summary: "one generation per launch: read board A, write board B, the host swaps them",
        kind: Step::DoubleBuffer,
    },
    Variant {
        name: "step-in-place",
        kernel: kernel!("ch3_life", "02_step_in_place", "life_step_in_place"),
        expect: Expect::Race,
        summary: "one board updated in place: neighbours read cells already in the next generation",
        kind: Step::InPlace,
    },
    Variant {
        name: "step-floor-blocks",
        kernel: kernel!("ch3_life", "03_step_floor_blocks", "life_step_floor_blocks"),
        expect: Expect::WrongResult,
        summary: "width / 32 × height / 32 blocks of 32 × 32: the cells past the last whole tile are never computed",
        kind: Step::FloorBlocks,
    },
    Variant {
        name: "iterate-single-block",
        kernel: kernel!(
            "ch3_life",
            "04_iterate_single_block",
            "life_iterate_single_block"
        ),
        expect: Expect::Correct,
        summary: "every generation in one launch of one block, __syncthreads() between generations",
        kind: Step::SingleBlock,
    },
    Variant {
        name: "iterate-multi-block",
        kernel: kernel!(
            "ch3_life",
            "05_iterate_multi_block",
            "life_iterate_multi_block"
        ),
        expect: Expect::Race,
        summary: "the same loop on a grid of blocks: __syncthreads() does not wait for the other blocks",
        kind: Step::MultiBlock,
    },
    Variant {
        name: "iterate-shared-halo",
        kernel: kernel!("ch3_life", "06_iterate_shared_halo", "life_iterate_shared"),
        expect: Expect::Correct,
        summary: "4 generations per launch on any grid: each block iterates its tile and a recomputed halo in shared memory",
        kind: Step::SharedHalo,
    },
    Variant {
        name: "step-bit-packed",
        kernel: kernel!("ch3_life", "07_step_bit_packed", "life_step_bit_packed"),
        expect: Expect::Correct,
        summary: "32 cells a word, counted all at once with bitwise adders; width a multiple of 32",
        kind: Step::BitPacked,
    },
    Variant {
        name: "step-bit-packed-strips",
        kernel: kernel!(
            "ch3_life",
            "08_step_bit_packed_strips",
            "life_step_bit_packed_strips"
        ),
        expect: Expect::Correct,
        summary: "bit-packed, each thread walking down 8 rows: every word loaded and summed once",
        kind: Step::BitPackedStrips,
    },
    Variant {
        name: "step-four-cells",
        kernel: kernel!("ch3_life", "09_step_four_cells", "life_step_four_cells"),
        expect: Expect::Correct,
        summary: "four cells of a row per thread: six columns loaded once, a three-column sum slid along",
        kind: Step::FourCells,
    },
];

/// The one-generation kernels in the order of the chapter's climb.
pub const LIFE_CLIMB: [&str; 4] = [
    "step-double-buffer",
    "iterate-shared-halo",
    "step-bit-packed",
    "step-bit-packed-strips",
];

// ANCHOR: pack
/// A board as the bit-packed kernels read it: row after row of `width / 32` words, cell
/// `32w + i` of a row in bit `i` of its word `w`. The width must be a multiple of 32, so that no
/// word straddles two rows.
pub fn pack(board: &Board) -> Result<Vec<u32>> {
    check_packable(board.width())?;
    Ok(board
        .cells()
        .chunks(WORD_CELLS as usize)
        .map(|cells| {
            cells
                .iter()
                .enumerate()
                .fold(0u32, |word, (bit, &cell)| word | u32::from(cell) << bit)
        })
        .collect())
}
// ANCHOR_END: pack

/// The board [`pack`] made `words` from.
pub fn unpack(width: u32, height: u32, words: &[u32]) -> Result<Board> {
    check_packable(width)?;
    let cells = words
        .iter()
        .flat_map(|&word| (0..WORD_CELLS).map(move |bit| ((word >> bit) & 1) as u8))
        .collect();
    Board::from_cells(width, height, cells)
}

/// The bit-packed kernels' one requirement, refused in one sentence.
pub fn check_packable(width: u32) -> Result<()> {
    if width == 0 || !width.is_multiple_of(WORD_CELLS) {
        return Err(HarnessError::Invalid(format!(
            "the bit-packed kernels pack {WORD_CELLS} cells into each 32-bit word, so a board's width must be a multiple of {WORD_CELLS}; {width} is not"
        )));
    }
    Ok(())
}

/// The variant named `name`; panics only on a typo in this crate, caught by its tests.
pub fn variant(name: &str) -> &'static Ch3Variant {
    match harness::find_variant(VARIANTS, name) {
        Ok(variant) => variant,
        Err(message) => panic!("{message}"),
    }
}

/// What a run of a variant produced.
#[derive(Debug)]
pub struct Outcome {
    pub board: Board,
    /// The checkers' findings over all launches, repeats merged.
    pub report: LaunchReport,
    pub launches: u32,
    pub shape: LaunchShape,
}

/// The launch shape `variant` runs a `width × height` board with. `block` is the caller's
/// choice for the kernels that take any 2D block ([`Step::takes_any_block`]), [`STEP_BLOCK`]
/// when `None`; the others fix their own block and refuse a choice.
pub fn launch_shape(
    variant: &Ch3Variant,
    width: u32,
    height: u32,
    block: Option<(u32, u32)>,
) -> Result<LaunchShape> {
    let step = variant.kind;
    if block.is_some() && !step.takes_any_block() {
        return Err(HarnessError::Invalid(format!(
            "{} chooses its own block shape; it cannot be given one",
            variant.name
        )));
    }
    let (bx, by) = block.unwrap_or(STEP_BLOCK);
    if bx == 0 || by == 0 {
        return Err(HarnessError::Invalid(format!(
            "a block of {bx} × {by} threads has no threads"
        )));
    }
    let shape = |grid: (u32, u32), block: (u32, u32)| LaunchShape {
        grid: Dim3::xy(grid.0, grid.1),
        block: Dim3::xy(block.0, block.1),
        dynamic_shared_bytes: 0,
    };
    Ok(match step {
        Step::DoubleBuffer | Step::InPlace | Step::MultiBlock => {
            shape((width.div_ceil(bx), height.div_ceil(by)), (bx, by))
        }
        // ANCHOR: floor_grid
        Step::FloorBlocks => shape((width / TILE, height / TILE), (TILE, TILE)),
        // ANCHOR_END: floor_grid
        Step::SingleBlock => {
            let cells = u64::from(width) * u64::from(height);
            if cells > SINGLE_BLOCK_MAX_CELLS {
                return Err(HarnessError::Invalid(format!(
                    "{} runs the whole board as one block of one thread per cell, so it takes at most {SINGLE_BLOCK_MAX_CELLS} cells; a {width} × {height} board has {cells}",
                    variant.name
                )));
            }
            shape((1, 1), (width, height))
        }
        Step::SharedHalo => shape(
            (width.div_ceil(HALO_INNER), height.div_ceil(HALO_INNER)),
            (TILE, TILE),
        ),
        Step::FourCells => shape(
            (width.div_ceil(FOUR_CELLS).div_ceil(bx), height.div_ceil(by)),
            (bx, by),
        ),
        Step::BitPacked | Step::BitPackedStrips => {
            check_packable(width)?;
            let rows = if step == Step::BitPacked {
                height
            } else {
                height.div_ceil(STRIP)
            };
            shape(
                ((width / WORD_CELLS).div_ceil(bx), rows.div_ceil(by)),
                (bx, by),
            )
        }
    })
}

/// Runs `generations` generations of `board` through `variant`, launching it as its kernel
/// needs (once per generation, once in all, or once per [`HALO`] generations), and downloads
/// the result.
pub fn run(
    device: &mut Device,
    variant: &Ch3Variant,
    board: &Board,
    generations: u32,
    block: Option<(u32, u32)>,
) -> Result<Outcome> {
    device.ensure_can_run(variant)?;
    let (width, height) = (board.width(), board.height());
    let shape = launch_shape(variant, width, height, block)?;
    let kernel = &variant.kernel;
    let mut report = LaunchReport::default();
    let mut launches = 0;
    let result = match variant.kind {
        Step::DoubleBuffer | Step::FloorBlocks | Step::SharedHalo | Step::FourCells => {
            let mut from = device.upload(board.cells(), "board_a")?;
            let mut to = device.zeros::<u8>(board.cells().len(), "board_b")?;
            device.name_cells(&from, width as usize);
            device.name_cells(&to, width as usize);
            let per_launch = variant.kind.generations_per_launch().unwrap_or(1);
            let mut done = 0;
            while done < generations {
                let now = per_launch.min(generations - done);
                let mut args = vec![
                    Arg::from(&from),
                    Arg::from(&to),
                    width.into(),
                    height.into(),
                ];
                if variant.kind == Step::SharedHalo {
                    args.push(now.into());
                }
                absorb(&mut report, device.launch(kernel, shape, &args)?);
                launches += 1;
                done += now;
                std::mem::swap(&mut from, &mut to);
            }
            device.download(&from)?
        }
        Step::BitPacked | Step::BitPackedStrips => {
            let words_per_row = width / WORD_CELLS;
            let mut from = device.upload(&pack(board)?, "words_a")?;
            let mut to = device.zeros::<u32>(from.len(), "words_b")?;
            for _ in 0..generations {
                let args = [
                    Arg::from(&from),
                    Arg::from(&to),
                    words_per_row.into(),
                    height.into(),
                ];
                absorb(&mut report, device.launch(kernel, shape, &args)?);
                launches += 1;
                std::mem::swap(&mut from, &mut to);
            }
            let words = device.download(&from)?;
            return Ok(Outcome {
                board: unpack(width, height, &words)?,
                report,
                launches,
                shape,
            });
        }
        Step::InPlace => {
            let cells = device.upload(board.cells(), "board")?;
            device.name_cells(&cells, width as usize);
            for _ in 0..generations {
                let args = [Arg::from(&cells), width.into(), height.into()];
                absorb(&mut report, device.launch(kernel, shape, &args)?);
                launches += 1;
            }
            device.download(&cells)?
        }
        Step::SingleBlock | Step::MultiBlock => {
            let cells = device.upload(board.cells(), "board")?;
            let scratch = device.zeros::<u8>(board.cells().len(), "scratch")?;
            device.name_cells(&cells, width as usize);
            device.name_cells(&scratch, width as usize);
            let mut args = vec![Arg::from(&cells), Arg::from(&scratch)];
            if variant.kind == Step::MultiBlock {
                args.extend([Arg::from(width), Arg::from(height)]);
            }
            args.push(generations.into());
            absorb(&mut report, device.launch(kernel, shape, &args)?);
            launches += 1;
            device.download(&cells)?
        }
    };
    Ok(Outcome {
        board: Board::from_cells(width, height, result)?,
        report,
        launches,
        shape,
    })
}

/// Launches one step of `variant` on boards already on the device without waiting, for the
/// timing loops: `generations` for the kernels that take a count, `scratch` as their second board.
pub fn launch_async(
    device: &mut Device,
    variant: &Ch3Variant,
    shape: LaunchShape,
    (from, to): (&Buffer<u8>, &Buffer<u8>),
    (width, height): (u32, u32),
    generations: u32,
) -> Result<()> {
    let mut args = vec![Arg::from(from)];
    match variant.kind {
        Step::DoubleBuffer | Step::FloorBlocks | Step::FourCells => {
            args.extend([Arg::from(to), width.into(), height.into()])
        }
        Step::InPlace => args.extend([Arg::from(width), height.into()]),
        Step::SingleBlock => args.extend([Arg::from(to), generations.into()]),
        Step::MultiBlock | Step::SharedHalo => args.extend([
            Arg::from(to),
            width.into(),
            height.into(),
            generations.into(),
        ]),
        Step::BitPacked | Step::BitPackedStrips => {
            return Err(HarnessError::Invalid(format!(
                "{} runs on bit-packed boards: launch it with launch_packed_async",
                variant.name
            )));
        }
    }
    device.launch_async(&variant.kernel, shape, &args)
}

/// [`launch_async`] for the bit-packed kernels: one generation from `from` into `to`, boards of
/// `words_per_row` words a row.
pub fn launch_packed_async(
    device: &mut Device,
    variant: &Ch3Variant,
    shape: LaunchShape,
    (from, to): (&Buffer<u32>, &Buffer<u32>),
    (words_per_row, height): (u32, u32),
) -> Result<()> {
    let args = [
        Arg::from(from),
        Arg::from(to),
        words_per_row.into(),
        height.into(),
    ];
    device.launch_async(&variant.kernel, shape, &args)
}

/// Adds one launch's findings to `report`, merging a finding that repeats one already there.
fn absorb(report: &mut LaunchReport, launch: LaunchReport) {
    for finding in launch.findings {
        let same = report
            .findings
            .iter_mut()
            .find(|seen| seen.kind == finding.kind && seen.lines() == finding.lines());
        match same {
            Some(seen) => seen.count += finding.count,
            None => report.findings.push(finding),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shapes_follow_each_kernel() {
        let double = variant("step-double-buffer");
        let shape = launch_shape(double, 100, 33, None).unwrap();
        assert_eq!(
            (shape.grid, shape.block),
            (Dim3::xy(7, 3), Dim3::xy(16, 16))
        );
        let shape = launch_shape(double, 100, 33, Some((32, 4))).unwrap();
        assert_eq!(shape.grid, Dim3::xy(4, 9));
        let floor = launch_shape(variant("step-floor-blocks"), 100, 33, None).unwrap();
        assert_eq!(floor.grid, Dim3::xy(3, 1));
        let halo = launch_shape(variant("iterate-shared-halo"), 100, 24, None).unwrap();
        assert_eq!((halo.grid, halo.block), (Dim3::xy(5, 1), Dim3::xy(32, 32)));
        let four = launch_shape(variant("step-four-cells"), 101, 33, Some((8, 4))).unwrap();
        assert_eq!(
            four.grid,
            Dim3::xy(4, 9),
            "⌈⌈101 / 4⌉ / 8⌉ = 4 blocks across"
        );
        let single = launch_shape(variant("iterate-single-block"), 40, 25, None).unwrap();
        assert_eq!((single.grid, single.block), (Dim3::x(1), Dim3::xy(40, 25)));
    }

    #[test]
    fn packing_puts_cell_32w_plus_i_in_bit_i_of_word_w() {
        let mut cells = vec![0u8; 128];
        // row 0: cells 0 and 31; row 1: cells 5 and 33
        for index in [0, 31, 64 + 5, 64 + 33] {
            cells[index] = 1;
        }
        let board = Board::from_cells(64, 2, cells).unwrap();
        let words = pack(&board).unwrap();
        assert_eq!(words, vec![0x8000_0001, 0, 1 << 5, 1 << 1]);
        assert_eq!(unpack(64, 2, &words).unwrap(), board);
        let error = pack(&Board::dead(40, 2).unwrap()).unwrap_err().to_string();
        assert_eq!(
            error,
            "the bit-packed kernels pack 32 cells into each 32-bit word, so a board's width must be a multiple of 32; 40 is not"
        );
        let strips = launch_shape(variant("step-bit-packed-strips"), 96, 17, Some((2, 2))).unwrap();
        assert_eq!(strips.grid, Dim3::xy(2, 2));
        let words = launch_shape(variant("step-bit-packed"), 96, 17, Some((2, 2))).unwrap();
        assert_eq!(words.grid, Dim3::xy(2, 9));
    }

    #[test]
    fn shapes_a_kernel_cannot_run_are_refused() {
        let error = launch_shape(variant("iterate-single-block"), 40, 26, None)
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("at most 1024 cells; a 40 × 26 board has 1040"),
            "{error}"
        );
        let error = launch_shape(variant("iterate-shared-halo"), 10, 10, Some((8, 8)))
            .unwrap_err()
            .to_string();
        assert_eq!(
            error,
            "iterate-shared-halo chooses its own block shape; it cannot be given one"
        );
        assert!(launch_shape(variant("step-in-place"), 10, 10, Some((0, 8))).is_err());
    }
}
