//! Chapter 2: shared memory, barriers and reductions.

use ch2_reductions::testing::{
    block_2d, cap_length, cap_rows, data, floats, grid_2d, length, linear_shape, side,
    whole_warp_shape,
};
use ch2_reductions::{
    SumCheck, abs_sum_f64, blobs_reference, depth_1d, depth_2d, pixel_matches, run_blobs,
    run_reduce_1d, run_reduce_2d, shape_2d, sum_2d_f64, sum_f64, variant,
};
use harness::{Device, Expect, LaunchShape};
use proptest::prelude::*;

use super::{as_variant, fix_it, write_function, write_it};
use crate::check::{Check, Failure, Wrong};
use crate::exercise::{Exercise, Fails};
use crate::program::Program;
use crate::property::{self, Budget, Observed, excerpt};

pub(super) fn exercises() -> Vec<Exercise> {
    vec![
        Exercise {
            title: "A tree without barriers",
            statement: "Each block sums its share of x into shared memory, then halves the \
                active threads at every step of a tree until s[0] holds the block's sum; the \
                host adds the block sums. Any grid, a power-of-two block. The sums come out \
                right on small tests and racecheck still objects: a thread may read \
                s[tid + i] before the thread that owns it has stored its sum.",
            hints: &[
                "Racecheck names the line of the tree's addition. Which thread wrote \
                 s[tid + i], and in which step?",
                "Every step must finish before the next starts, for the whole block: a \
                 __syncthreads() inside the loop, after the if, reached by every thread.",
            ],
            taught: "Shared memory is shared between warps that run in any order. A value \
                another thread wrote is only safe to read after a barrier that both threads \
                pass; in a tree, that is one barrier per level.",
            ..fix_it(
                variant("tree-no-sync"),
                variant("tree-reduction"),
                TreeReduction,
                Fails::at_bug(Expect::Race),
            )
        },
        Exercise {
            title: "A barrier inside an if",
            statement: "The same tree, with a __syncthreads() in it, in the wrong place: only \
                the threads with tid < i reach it. On a GPU that can hang or compute garbage, \
                so this one runs on the emulator only until synccheck is silent.",
            hints: &[
                "synccheck names the barrier and says how many threads wait there and where \
                 the others are.",
                "A barrier must be reached by every thread of the block: move it out of the \
                 if, to the end of the loop body.",
            ],
            taught: "__syncthreads() is a promise that every thread of the block arrives. \
                Inside a branch only some threads take, the others never come: hardware may \
                hang, skip or mismatch barriers. Put barriers where control flow is uniform.",
            ..fix_it(
                variant("tree-sync-in-if"),
                variant("tree-reduction"),
                TreeReduction,
                Fails::at_bug(Expect::BarrierDivergence),
            )
        },
        Exercise {
            title: "Blobs without a barrier",
            statement: "Every thread of a 16 × 16 block writes its amplitude into a shared \
                tile, then writes the pixel of its mirror image in the tile to the image. \
                The host launches ⌈width / 16⌉ × ⌈height / 16⌉ blocks of 16 × 16. The mirrored \
                slot belongs to another thread, which may not have written it yet.",
            hints: &[
                "Racecheck names the line that reads tile[15 - y][15 - x]: who wrote that \
                 slot, and what orders the write before this read?",
                "All writes to the tile must be done before any thread reads its mirror: \
                 __syncthreads() between them, outside the if.",
            ],
            taught: "Reading what another thread wrote to shared memory needs a barrier \
                between the write and the read, even when each thread writes once: nothing \
                says the other warp has run yet.",
            ..fix_it(
                variant("blobs-no-sync"),
                variant("blobs"),
                Blobs,
                Fails::at_bug(Expect::Race),
            )
        },
        Exercise {
            title: "Strides swapped",
            statement: "A 2D reduction over a rows × cols matrix with a 2D grid of 2D blocks: \
                each thread adds a grid-stride share of the matrix, then the block reduces in \
                shared memory and the host adds the block sums. It is right on square grids \
                only; on others some elements are added twice and some never.",
            hints: &[
                "Look at the two strides: how far apart are a thread's columns, and how many \
                 threads are there along a row of the grid?",
                "The x axis (columns) strides by blockDim.x * gridDim.x, the y axis (rows) by \
                 blockDim.y * gridDim.y.",
            ],
            taught: "A grid-stride loop must step by the number of threads along its own \
                axis. Square grids hide a swapped axis, so test shapes that are not square.",
            ..fix_it(
                variant("reduction-2d-swapped-strides"),
                variant("reduction-2d"),
                Reduction2d,
                Fails::wrong_result(),
            )
        },
        Exercise {
            title: "A warp adds in registers",
            statement: "Write warp_sum, the heart of the warp-shuffle reduction: after it, lane \
                0 of each warp holds the sum of the 32 values its lanes passed in. Read the \
                other lanes' registers with __shfl_down_sync(FULL_MASK, value, offset), \
                halving offset from 16 to 1. block_sum and the kernel around it are given; the \
                host launches 1 to 64 blocks of whole warps, then the same kernel on the block \
                sums with one block.",
            hints: &[
                "At each step a lane adds the value `offset` lanes above it; after offsets 16, \
                 8, 4, 2, 1, lane 0 has all 32.",
                "A loop over offset from WARP_SIZE / 2 down to 1, halving it: each time, add \
                 to value what __shfl_down_sync with every lane in its mask reads from the \
                 lane offset above. Then lane 0's value is the warp's sum: return it.",
            ],
            taught: "Within a warp, lanes can read each other's registers: a shuffle tree adds \
                32 values in 5 steps with no shared memory and no barrier, and only one value \
                per warp goes through shared memory. It is the textbook's next step, and the \
                chapter's GPU table shows it buys nothing when loads dominate.",
            ..write_function(
                variant("warp-shuffle"),
                "warp_sum",
                "return, in lane 0, the sum of the warp's 32 values, with __shfl_down_sync",
                "return value;",
                Rung("warp-shuffle"),
            )
        },
        Exercise {
            title: "One atomicAdd per block",
            statement: "one-launch, the climb's last kernel, finishes in the last block to \
                arrive, counted with a fence and an atomic. Write atomic_finish(const float \
                *x, unsigned int n, float *total) instead: each block sums its share with the \
                helpers above (thread_sum, then block_sum, built on the warp_sum you wrote in \
                warp-shuffle) and thread 0 adds the block's sum into *total with one \
                atomicAdd. The host zeroes *total, launches 1 to 64 blocks \
                of whole warps (32 to 1024 threads) and checks the total within the error \
                bound of a chain of one addition per block, in any order.",
            hints: &[
                "Two steps: the block's sum, block_sum of what thread_sum gives each thread; \
                 then one thread of the block, and only one, adds it into *total.",
                "That one thread adds with atomicAdd, since every block's thread adds into \
                 *total at once: the additions cannot be lost, but nothing fixes their order.",
            ],
            taught: "An atomicAdd per block replaces the counter, the fences and the last \
                block's loop, at a price: float addition is not associative, so the total is \
                rounded differently depending on which block arrives when, and its last bits \
                can change from run to run. Its error bound counts one addition per block, in \
                whichever order.",
            ..write_it(
                variant("atomic-finish"),
                "add this block's sum (block_sum of thread_sum) to *total, once per block",
                Rung("atomic-finish"),
            )
        },
    ]
}

/// A climb kernel of whole-warp blocks, `name`'s signature and launches, within its bound.
struct Rung(&'static str);

impl Check for Rung {
    fn run(&self, program: &Program, device: &mut Device, budget: &Budget) -> Result<u32, Failure> {
        let fixed = variant(self.0);
        let yours = as_variant(program.kernel(&fixed.kernel)?, fixed);
        let cap = budget.size(4_000, 4_000_000);
        let on_gpu = budget.on_gpu;
        let shapes = whole_warp_shape().prop_map(move |shape| {
            if on_gpu {
                shape
            } else {
                LaunchShape::linear(shape.grid.x.min(8), shape.block.x.min(256))
            }
        });
        let strategy = (
            length(cap).prop_filter("within the budget", move |&n| n <= cap),
            data(),
            any::<u64>(),
            shapes,
        );
        property::run(
            device,
            budget,
            strategy,
            |device, &(n, data, seed, shape)| {
                let n = cap_length(n, shape);
                let x = floats(n, data, seed);
                let seen = Observed::new()
                    .fact("n", n)
                    .launch(shape)
                    .fact("x", excerpt(&x, None));
                match run_reduce_1d(device, &yours, &x, shape) {
                    Err(error) => seen.error(error),
                    Ok(outcome) => {
                        let check = SumCheck::new(
                            outcome.result,
                            sum_f64(&x),
                            depth_1d(yours.kind, n, shape),
                            abs_sum_f64(&x),
                        );
                        seen.reported(outcome.report).wrong(sum_wrong(&check))
                    }
                }
            },
        )
    }
}

/// `kernel(const float *x, unsigned n, float *block_sums)` on any grid of a power-of-two
/// block, block sums added on the host, within the summation bound of the f64 sum.
struct TreeReduction;

impl Check for TreeReduction {
    fn run(&self, program: &Program, device: &mut Device, budget: &Budget) -> Result<u32, Failure> {
        let fixed = variant("tree-reduction");
        let yours = as_variant(program.kernel(&fixed.kernel)?, fixed);
        let cap = budget.size(4_000, 4_000_000);
        let on_gpu = budget.on_gpu;
        let shapes = linear_shape().prop_map(move |shape| {
            if on_gpu {
                shape
            } else {
                LaunchShape::linear(shape.grid.x.min(8), shape.block.x.min(256))
            }
        });
        let strategy = (
            length(cap).prop_filter("within the budget", move |&n| n <= cap),
            data(),
            any::<u64>(),
            shapes,
        );
        property::run(
            device,
            budget,
            strategy,
            |device, &(n, data, seed, shape)| {
                let n = cap_length(n, shape);
                let x = floats(n, data, seed);
                let seen = Observed::new()
                    .fact("n", n)
                    .launch(shape)
                    .fact("x", excerpt(&x, None));
                match run_reduce_1d(device, &yours, &x, shape) {
                    Err(error) => seen.error(error),
                    Ok(outcome) => {
                        let check = SumCheck::new(
                            outcome.result,
                            sum_f64(&x),
                            depth_1d(yours.kind, n, shape),
                            abs_sum_f64(&x),
                        );
                        seen.reported(outcome.report).wrong(sum_wrong(&check))
                    }
                }
            },
        )
    }
}

fn sum_wrong(check: &SumCheck) -> Option<Wrong> {
    (!check.is_within()).then(|| Wrong {
        what: "the sum".into(),
        expected: property::within_bound(check.want, check.bound),
        got: check.got.to_string(),
        summary: None,
    })
}

/// `kernel(float *image, unsigned width, unsigned height)` on 16 × 16 blocks covering the
/// image, every pixel within its derived bound of the f64 reference.
struct Blobs;

impl Check for Blobs {
    fn run(&self, program: &Program, device: &mut Device, budget: &Budget) -> Result<u32, Failure> {
        let fixed = variant("blobs");
        let yours = as_variant(program.kernel(&fixed.kernel)?, fixed);
        let largest = budget.size(48u32, 3_000);
        let sides = prop_oneof![1u32..=largest.min(40), 1u32..=largest];
        property::run(
            device,
            budget,
            (sides.clone(), sides),
            |device, &(width, height)| {
                let seen = Observed::new().fact("image", format!("{width} × {height} pixels"));
                match run_blobs(device, &yours, width, height) {
                    Err(error) => seen.error(error),
                    Ok(outcome) => {
                        let want = blobs_reference(width, height);
                        let differing: Vec<usize> = outcome
                            .result
                            .iter()
                            .zip(&want)
                            .enumerate()
                            .filter(|(_, (got, want))| !pixel_matches(**got, **want))
                            .map(|(index, _)| index)
                            .collect();
                        let wrong = differing.first().map(|&index| Wrong {
                            what: format!(
                                "pixel (x {}, y {})",
                                index % width as usize,
                                index / width as usize
                            ),
                            expected: format!("{:.6}", want[index]),
                            got: outcome.result[index].to_string(),
                            summary: property::how_many_differ(
                                differing.len(),
                                want.len(),
                                "pixels",
                            ),
                        });
                        seen.reported(outcome.report).wrong(wrong)
                    }
                }
            },
        )
    }
}

/// `kernel(const float *a, unsigned rows, unsigned cols, float *block_sums)` on any 2D grid
/// of a 2D block of a power-of-two number of threads.
struct Reduction2d;

impl Check for Reduction2d {
    fn run(&self, program: &Program, device: &mut Device, budget: &Budget) -> Result<u32, Failure> {
        let fixed = variant("reduction-2d");
        let yours = as_variant(program.kernel(&fixed.kernel)?, fixed);
        // Swapped strides show only when a grid is not square and a thread's loop wraps: small
        // cases need more of them to meet both.
        let budget = &Budget {
            cases: budget.cases * 3,
            ..budget.clone()
        };
        let on_gpu = budget.on_gpu;
        let largest = budget.size(64usize, 2_048);
        // On the emulator at most 256 threads a block: x keeps its power of two, y gives way.
        let blocks = block_2d().prop_map(move |(x, y)| {
            if on_gpu {
                (x, y)
            } else {
                let x = x.min(256);
                (x, y.min(256 / x))
            }
        });
        let strategy = (
            side(largest).prop_map(move |s| s.min(largest)),
            side(largest).prop_map(move |s| s.min(largest)),
            data(),
            any::<u64>(),
            grid_2d(),
            blocks,
        );
        property::run(
            device,
            budget,
            strategy,
            |device, &(rows, cols, data, seed, grid, block)| {
                let shape = shape_2d(grid, block);
                let rows = cap_rows(rows, cols, shape);
                let a = floats(rows * cols, data, seed);
                let seen = Observed::new()
                    .fact("matrix", format!("{rows} × {cols}"))
                    .launch(shape)
                    .fact("a", excerpt(&a, None));
                match run_reduce_2d(device, &yours, &a, rows, cols, shape) {
                    Err(error) => seen.error(error),
                    Ok(outcome) => {
                        let check = SumCheck::new(
                            outcome.result,
                            sum_2d_f64(&a, rows, cols),
                            depth_2d(rows, cols, shape),
                            abs_sum_f64(&a),
                        );
                        seen.reported(outcome.report).wrong(sum_wrong(&check))
                    }
                }
            },
        )
    }
}
