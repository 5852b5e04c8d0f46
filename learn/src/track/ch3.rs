//! Chapter 3: the Game of Life on a torus.

use ch3_life::testing::{block, board, density, side};
use ch3_life::{Board, Ch3Variant, launch_shape, run, stencil, variant};
use harness::{Device, Expect};
use proptest::prelude::*;

use super::{as_variant, fix_it, write_it};
use crate::check::{Check, Failure, Wrong};
use crate::exercise::{Exercise, Fails};
use crate::program::Program;
use crate::property::{self, Budget, Observed};

pub(super) fn exercises() -> Vec<Exercise> {
    vec![
        Exercise {
            title: "Life in place",
            statement: "One generation of Life per launch on any 2D block. This kernel updates \
                the one board in place, so a thread may overwrite its cell while a neighbour \
                is still counting it. The host can also give you two boards: declare \
                life_step_in_place(const unsigned char *in, unsigned char *out, unsigned int \
                width, unsigned int height) and it passes the current board as in and a second \
                one as out, swapping them after every launch.",
            hints: &[
                "Racecheck names the line that stores the new cell: which threads read that \
                 cell during the same generation?",
                "Read only from the old board and write only to the new one: take in and out, \
                 count the neighbours in in, and store the cell in out[y * width + x].",
            ],
            taught: "A step that reads its neighbours cannot update in place without a barrier \
                across the whole grid, which a kernel does not have. Double buffering makes \
                the launch boundary that barrier: every read of one generation comes before \
                any write of the next.",
            ..fix_it(
                variant("step-in-place"),
                variant("step-double-buffer"),
                LifeStep,
                Fails::at_bug(Expect::Race),
            )
        },
        Exercise {
            title: "The cells past the last tile",
            statement: "One generation per launch with 32 × 32 blocks. It was launched on \
                ⌊width / 32⌋ × ⌊height / 32⌋ blocks, which leaves the last width % 32 columns \
                (and rows) without a thread. The host now rounds up, ⌈width / 32⌉ × \
                ⌈height / 32⌉ blocks of 32 × 32, so every cell has a thread, and some threads \
                land past the board. Make the kernel right for that launch.",
            hints: &[
                "memcheck names an access past the end of a board: which threads compute an \
                 x or y outside it?",
                "Threads with x >= width or y >= height have no cell: return before they \
                 read or write anything.",
            ],
            taught: "Round the grid up so every element gets a thread, and guard the threads \
                that fall past the edge. Rounding down silently drops the edge; rounding up \
                without a guard reads and writes outside the board.",
            ..fix_it(
                variant("step-floor-blocks"),
                variant("step-double-buffer"),
                LifeTiles,
                Fails::at(Expect::OutOfBounds, "unsigned int alive ="),
            )
        },
        Exercise {
            title: "Barriers do not span blocks",
            statement: "Many generations in one launch, on a grid of blocks, with \
                __syncthreads() between generations. It waits for the threads of one block \
                only: a cell on a block's edge is read by the next block, which runs a \
                generation ahead or behind. One launch cannot wait for every block. Write \
                life_iterate_shared(const unsigned char *in, unsigned char *out, unsigned int \
                width, unsigned int height, unsigned int generations) instead: the host \
                launches it once per 4 generations (or fewer, for the last launch) on \
                ⌈width / 24⌉ × ⌈height / 24⌉ blocks of 32 × 32 and swaps in and out. Each \
                block loads a 32 × 32 tile of in (its 24 × 24 cells and a 4-cell halo, \
                wrapping around the torus) into shared memory, steps the tile `generations` \
                times with __syncthreads() between steps, and writes its 24 × 24 cells to out.",
            hints: &[
                "While life_iterate_multi_block is in the file the host runs it as one \
                 launch, and racecheck shows blocks reading each other's edges. Rename it \
                 life_iterate_shared with the parameters above to switch to the tiled launch.",
                "Block (bx, by) owns cells from (bx * 24, by * 24); its thread (tx, ty) loads \
                 the cell at (bx * 24 + tx - 4, by * 24 + ty - 4), wrapped modulo width and \
                 height. After g steps only the cells at least g from the tile's edge are \
                 right, which is why 4 generations per launch need a 4-cell halo.",
                "Keep two shared tiles and alternate between them; a tile-edge thread has no \
                 neighbour outside the tile, so let it compute garbage that nobody keeps. \
                 Write out only for 4 <= tx, ty < 28 and for cells on the board.",
            ],
            taught: "__syncthreads() orders one block. Work that needs every block to finish \
                a step needs a new launch (or a cooperative grid sync). Recomputing a halo \
                lets each block run several steps alone: more arithmetic, far fewer launches \
                and global reads.",
            ..fix_it(
                variant("iterate-multi-block"),
                variant("iterate-shared-halo"),
                LifeIterate,
                Fails::at(Expect::Race, "+ below[left] + below[x] + below[right];"),
            )
        },
        Exercise {
            title: "Four cells a thread",
            statement: "One generation per launch, double-buffered, but each thread computes \
                four consecutive cells of a row: thread (i, y) owns cells 4i to 4i + 3 of row \
                y. Load the three rows of the six columns around them once (4i - 1 to 4i + 4, \
                wrapping around the torus), sum each column, and slide a three-column sum \
                along: 18 loads for four cells instead of 36. The host launches ⌈⌈width / 4⌉ \
                / blockDim.x⌉ × ⌈height / blockDim.y⌉ blocks of any 2D block, on boards of any \
                width (mind the last cells of a row when 4 does not divide it, and boards \
                narrower than six columns).",
            hints: &[
                "Start from step-double-buffer: the same up, down and row pointers. The column \
                 left of cell 4i is 4i - 1, or width - 1 when 4i is 0; step right with x = x \
                 == width - 1 ? 0 : x + 1, six times.",
                "Keep centre[k] = row[x] and column[k] = above[x] + row[x] + below[x] for k = \
                 0..5; cell 4i + j has column[j] + column[j + 1] + column[j + 2] - centre[j + \
                 1] neighbours.",
                "Write a cell only if 4i + j < width: out[y * width + 4i + j] = alive == 3 || \
                 (centre[j + 1] && alive == 2).",
            ],
            taught: "Reuse across neighbouring outputs cuts loads: a thread that computes \
                several cells loads each column once and shares its sum. The edge of a \
                multi-element thread needs the same care as a grid's edge.",
            ..write_it(
                variant("step-four-cells"),
                "compute cells 4i … 4i + 3 of row y from six column sums, for the cells on the board",
                LifeAnyBlock("step-four-cells"),
            )
        },
        Exercise {
            title: "A tile without its halo",
            statement: "A 2D stencil on a grid that does not wrap: every cell becomes the sum \
                of itself and its four neighbours, cells past the grid's edge counting as 0. \
                Each 16 × 16 block copies its cells into an 18 × 18 shared tile, waits, and \
                adds up from the tile. The host launches ⌈width / 16⌉ × ⌈height / 16⌉ blocks \
                of 16 × 16. The cells on a block's edge come out wrong: their neighbours \
                across the edge belong to the tile's halo, the ring around it, which nobody \
                loads.",
            hints: &[
                "Which tile entries does a thread with threadIdx.x == 0 read that no thread \
                 wrote? Draw the 18 × 18 tile and the 16 × 16 threads in its middle.",
                "The threads on the block's edges load one more cell each: tx == 0 the cell at \
                 x - 1 into tile[ty + 1][0], tx == 15 the cell at x + 1 into tile[ty + \
                 1][17], and the same for ty and the rows above and below.",
                "A halo cell outside the grid is 0 (with unsigned x - 1 wrapping to a huge \
                 value, x < width tests both ends), and every load must come before the \
                 __syncthreads().",
            ],
            taught: "A shared-memory tile of a stencil must hold everything the block reads: \
                its own cells and a halo as wide as the stencil's reach. The threads on the \
                edge load it, the barrier waits for it, and cells past the grid get the \
                boundary's value. Life's halo kernel does the same on a torus.",
            ..fix_it(
                stencil::variant("stencil-no-halo"),
                stencil::variant("stencil-halo"),
                Stencil,
                // initcheck names the sum that reads the halo nobody loaded.
                Fails::at_bug(Expect::WrongResult),
            )
        },
    ]
}

/// `kernel(const unsigned *in, unsigned *out, unsigned width, unsigned height)` on 16 × 16
/// blocks covering the grid, compared cell for cell.
struct Stencil;

impl Check for Stencil {
    fn run(&self, program: &Program, device: &mut Device, budget: &Budget) -> Result<u32, Failure> {
        let fixed = stencil::variant("stencil-halo");
        let yours = as_variant(program.kernel(&fixed.kernel)?, fixed);
        let largest = budget.size(48u32, 1_000);
        let strategy = (
            side(largest).prop_map(move |s| s.min(largest)),
            side(largest).prop_map(move |s| s.min(largest)),
            any::<u64>(),
        );
        property::run(
            device,
            budget,
            strategy,
            |device, &(width, height, seed)| {
                let grid = stencil::cells((width * height) as usize, seed);
                let seen = Observed::new()
                    .fact("grid", format!("{width} × {height} cells"))
                    .launch(stencil::shape(width, height));
                match stencil::run(device, &yours, &grid, width, height) {
                    Err(error) => seen.error(error),
                    Ok(outcome) => {
                        let want = stencil::stencil_cpu(&grid, width as usize, height as usize);
                        let differing: Vec<usize> = (0..want.len())
                            .filter(|&i| outcome.result[i] != want[i])
                            .collect();
                        let wrong = differing.first().map(|&i| Wrong {
                            what: format!(
                                "cell (x {}, y {})",
                                i % width as usize,
                                i / width as usize
                            ),
                            expected: want[i].to_string(),
                            got: outcome.result[i].to_string(),
                            summary: property::how_many_differ(
                                differing.len(),
                                want.len(),
                                "cells",
                            ),
                        });
                        seen.reported(outcome.report).wrong(wrong)
                    }
                }
            },
        )
    }
}

/// `name`'s kernel, one generation per launch on any 2D block, 1 to 3 generations.
struct LifeAnyBlock(&'static str);

impl Check for LifeAnyBlock {
    fn run(&self, program: &Program, device: &mut Device, budget: &Budget) -> Result<u32, Failure> {
        let fixed = variant(self.0);
        let yours = as_variant(program.kernel(&fixed.kernel)?, fixed);
        let strategy = (boards(budget), 1u32..=3, block());
        property::run(
            device,
            budget,
            strategy,
            |device, &(board, generations, block)| {
                life_case(device, &yours, board, generations, Some(block))
            },
        )
    }
}

/// Compares the board after `generations` with the CPU's, cell for cell.
fn board_wrong(got: &Board, start: &Board, generations: u32) -> Option<Wrong> {
    let want = start.after(generations);
    let diff = got.diff(&want);
    if diff.is_match() {
        return None;
    }
    let describe = |cell: u8| if cell == 0 { "dead" } else { "alive" };
    Some(match diff.first {
        Some((x, y)) => {
            let index = (y * got.width() + x) as usize;
            Wrong {
                what: format!("cell (x {x}, y {y})"),
                expected: describe(want.cells()[index]).into(),
                got: describe(got.cells()[index]).into(),
                summary: property::how_many_differ(
                    diff.differing as usize,
                    diff.cells as usize,
                    "cells",
                ),
            }
        }
        None => Wrong {
            what: "the board".into(),
            expected: format!("{} × {}", want.width(), want.height()),
            got: format!("{} × {}", got.width(), got.height()),
            summary: None,
        },
    })
}

/// Runs `yours` for `generations` from a generated board, with `block` when it takes one.
fn life_case(
    device: &mut Device,
    yours: &Ch3Variant,
    (width, height, density, seed): (u32, u32, f64, u64),
    generations: u32,
    block: Option<(u32, u32)>,
) -> Observed {
    let start = board(width, height, density, seed);
    let mut seen = Observed::new()
        .fact(
            "board",
            format!("{width} × {height}, {:.0}% alive", density * 100.0),
        )
        .fact("generations", generations);
    if let Ok(shape) = launch_shape(yours, width, height, block) {
        seen = seen.launch(shape);
    }
    match run(device, yours, &start, generations, block) {
        Err(error) => seen.error(error),
        Ok(outcome) => {
            seen.reported(outcome.report)
                .wrong(board_wrong(&outcome.board, &start, generations))
        }
    }
}

fn boards(budget: &Budget) -> impl Strategy<Value = (u32, u32, f64, u64)> + use<> {
    let largest = budget.size(40u32, 512);
    (
        side(largest).prop_map(move |s| s.min(largest)),
        side(largest).prop_map(move |s| s.min(largest)),
        density(),
        any::<u64>(),
    )
}

/// One generation per launch: in place on one board, `(board, width, height)`, or double
/// buffered, `(in, out, width, height)`, whichever the learner's kernel takes; any 2D block.
struct LifeStep;

impl Check for LifeStep {
    fn run(&self, program: &Program, device: &mut Device, budget: &Budget) -> Result<u32, Failure> {
        let in_place = variant("step-in-place");
        let double = variant("step-double-buffer");
        let yours = if program.has(&["life_step_in_place"], &in_place.kernel) {
            let kernel = program.kernel_named(["life_step_in_place"], &in_place.kernel)?;
            as_variant(kernel, in_place)
        } else {
            let kernel =
                program.kernel_named(["life_step_in_place", "life_step"], &double.kernel)?;
            as_variant(kernel, double)
        };
        let strategy = (boards(budget), 1u32..=3, block());
        property::run(
            device,
            budget,
            strategy,
            |device, &(board, generations, block)| {
                life_case(device, &yours, board, generations, Some(block))
            },
        )
    }
}

/// The double buffer's kernel on ⌈width / 32⌉ × ⌈height / 32⌉ blocks of 32 × 32.
struct LifeTiles;

impl Check for LifeTiles {
    fn run(&self, program: &Program, device: &mut Device, budget: &Budget) -> Result<u32, Failure> {
        let double = variant("step-double-buffer");
        let kernel = program.kernel(&double.kernel)?;
        let yours = as_variant(kernel, double);
        let strategy = (boards(budget), 1u32..=2);
        property::run(device, budget, strategy, |device, &(board, generations)| {
            life_case(device, &yours, board, generations, Some((32, 32)))
        })
    }
}

/// Many generations: `life_iterate_multi_block` in one launch on any block, or
/// `life_iterate_shared` once per 4 generations on the halo tiles.
struct LifeIterate;

impl Check for LifeIterate {
    fn run(&self, program: &Program, device: &mut Device, budget: &Budget) -> Result<u32, Failure> {
        let multi = variant("iterate-multi-block");
        let shared = variant("iterate-shared-halo");
        if program.has(&["life_iterate_multi_block"], &multi.kernel)
            && program.defines("life_iterate_shared").is_none()
        {
            let kernel = program.kernel_named(["life_iterate_multi_block"], &multi.kernel)?;
            let yours = as_variant(kernel, multi);
            let strategy = (boards(budget), 1u32..=6, block());
            return property::run(
                device,
                budget,
                strategy,
                |device, &(board, generations, block)| {
                    life_case(device, &yours, board, generations, Some(block))
                },
            );
        }
        let kernel = program.kernel_named(["life_iterate_shared"], &shared.kernel)?;
        let yours = as_variant(kernel, shared);
        let strategy = (boards(budget), 0u32..=10);
        property::run(device, budget, strategy, |device, &(board, generations)| {
            life_case(device, &yours, board, generations, None)
        })
    }
}
