//! Chapter 7: matrix multiplication.

use ch1_map::exact;
use ch7_matmul::testing::{block, side};
use ch7_matmul::{
    Ch7Variant, Dims, MatmulCheck, covering_shape, element_bound, matmul_f64, random_matrix,
    run_matmul, tiled_2x2_shape, tiled_shape, transpose, variant,
};
use harness::verify::compare_exact;
use harness::{Arg, Device, Expect, KernelSource, LaunchShape};
use proptest::prelude::*;

use super::{as_variant, fix_it, write_it};
use crate::check::{Check, Failure, Wrong};
use crate::exercise::{Exercise, Fails};
use crate::goal::{self, Outcome};
use crate::program::Program;
use crate::property::{self, Budget, Observed, wrong_from};

pub(super) fn exercises() -> Vec<Exercise> {
    vec![
        Exercise {
            title: "A write outside the guard",
            statement: "C = A · B, one thread per element of C (M × N), row-major, on any 2D \
                block with a grid of ⌈N / blockDim.x⌉ × ⌈M / blockDim.y⌉ blocks. The sum is \
                guarded, the write is not: threads past the last column write into the next \
                row, threads past the last row write past the end of C.",
            hints: &[
                "The checkers name the write to C: which threads have row >= M or col >= N, \
                 and where do their writes land?",
                "Only threads with row < M and col < N may write: move the store inside the \
                 if.",
            ],
            taught: "Guard every access, not just the arithmetic: the stray thread's \
                harmless-looking 0 lands in someone else's element.",
            ..fix_it(
                variant("naive-write-outside-guard"),
                variant("naive"),
                Naive,
                Fails::at_bug(Expect::OutOfBounds),
            )
        },
        Exercise {
            title: "Tiles past the edge",
            statement: "Tiled C = A · B: 16 × 16 blocks, each loading a 16 × 16 tile of A \
                and of B into shared memory per step along K; the grid covers C with \
                ⌈N / 16⌉ × ⌈M / 16⌉ blocks. When 16 does not divide M, N or K, the loads \
                read past the edges and the last blocks write past C.",
            hints: &[
                "memcheck names an access past an end: which rows and columns do the loads \
                 and the store reach in the last tile?",
                "Load 0 for a tile element outside A or B (row < M and t * 16 + tx < K for \
                 A, t * 16 + ty < K and col < N for B): zeros add nothing. Store C only for \
                 row < M and col < N.",
            ],
            taught: "A tile that overhangs the matrix must be padded, with the operation's \
                identity (0 for a sum of products), and its results clipped. Sizes that are \
                multiples of the tile hide the bug.",
            ..fix_it(
                variant("tiled-no-bounds"),
                variant("tiled"),
                Tiled,
                Fails::at(Expect::OutOfBounds, "As[ty][tx] = A["),
            )
        },
        Exercise {
            title: "The missing second barrier",
            statement: "Tiled C = A · B with bounds, any M, N, K. Each step loads a tile, \
                waits, and multiplies, then the loop loads the next tile, without waiting for \
                the other threads to finish multiplying: a fast warp overwrites a tile that \
                slower warps are still reading.",
            hints: &[
                "Racecheck names a tile store: which earlier reads of the same tile element \
                 does nothing order it after?",
                "Two barriers per step: after the loads (the tile is full) and after the \
                 multiply (everyone is done with it).",
            ],
            taught: "A shared buffer reused in a loop needs a barrier after its last use as \
                well as after it is filled: one protects reads from early writes, the other \
                writes from late reads.",
            ..fix_it(
                variant("tiled-missing-second-sync"),
                variant("tiled"),
                Tiled,
                Fails::at_bug(Expect::Race),
            )
        },
        Exercise {
            title: "Four outputs a thread",
            statement: "Tiled C = A · B where each thread computes a 2 × 2 block of C: a 16 × 16 \
                block computes a 32 × 32 tile of C, thread (tx, ty) its rows row0 = 32 · \
                blockIdx.y + ty and row0 + 16, columns col0 = 32 · blockIdx.x + tx and col0 + \
                16. Per step along K it loads two elements of a 32 × 16 tile of A and two of a \
                16 × 32 tile of B, zero past the edges as in tiled; then every value it reads \
                from shared memory feeds two multiply-adds. The host launches ⌈N / 32⌉ × ⌈M / \
                32⌉ blocks of 16 × 16 on any M, N, K, with C filled with NaN first, so an \
                element no thread writes reads NaN. Speed goal, on a GPU: beat tiled.",
            hints: &[
                "Start from tiled: the same loop over t, the same zero padding, two barriers \
                 per step. As is float[32][16] and Bs float[16][32]; each thread fills As[ty][tx], \
                 As[ty + 16][tx], Bs[ty][tx] and Bs[ty][tx + 16].",
                "Keep four sums in registers. For each k, read the two values of column k of \
                 As that the thread's rows need (rows ty and ty + 16) and the two of row k of \
                 Bs that its columns need (tx and tx + 16), once each, and add each of the four \
                 products to its own sum.",
                "Store each of the four only where it lies in C: row < M and col < N for each \
                 of (row0, col0), (row0, col1), (row1, col0), (row1, col1).",
            ],
            taught: "Register tiling: a thread that computes several outputs reuses each value \
                it loads, so shared-memory traffic per multiply-add halves. It is the first \
                rung of the climb to cuBLAS, whose kernels give each thread an 8 × 8 block or \
                more.",
            ..write_it(
                variant("tiled-2x2"),
                "compute C's 2 × 2 block at rows row0, row0 + 16 and columns col0, col0 + 16 from 32 × 16 and 16 × 32 shared tiles",
                Tiled2x2,
            )
        },
        Exercise {
            title: "A transpose and its banks",
            statement: "out = inᵀ for a rows × cols matrix: each block of 32 × 8 threads \
                copies a 32 × 32 tile of in into shared memory row by row, then writes the \
                tile's columns as rows of out, so that both the loads and the stores of global \
                memory are coalesced. The host launches ⌈cols / 32⌉ × ⌈rows / 32⌉ blocks. The \
                results are right and the checkers are silent, but reading a column of the \
                tile sends all 32 lanes of a warp to one bank of shared memory. Goal: no bank \
                conflicts (the emulator counts them); on a GPU, also beat this kernel's time.",
            hints: &[
                "The emulator names the line that reads tile[threadIdx.x][…]: with 32 floats a \
                 row, element (r, c) is word 32r + c, in bank c, whatever r is.",
                "Give the tile one spare column: float tile[32][33]. Element (r, c) is then \
                 word 33r + c, in bank (r + c) % 32, so a column's 32 elements fall in 32 \
                 different banks, and rows stay contiguous.",
            ],
            taught: "Shared memory serves a warp in one pass only when its lanes touch \
                different banks (or the same word). A tile read by columns puts a whole column \
                in one bank; a spare column per row staggers the banks. It costs 32 floats and \
                no instructions, and a GPU runs the transpose measurably faster for it.",
            ..fix_it(
                transpose::variant("transpose-shared"),
                transpose::variant("transpose-padded"),
                Transpose,
                Fails::bank_conflicts_at("= tile[threadIdx.x]"),
            )
        },
    ]
}

/// `kernel(const float *in, float *out, unsigned rows, unsigned cols)` on 32 × 8 blocks, bit
/// for bit; then no bank conflicts on a 64 × 96 matrix (emulator), and on a GPU faster than
/// `transpose-shared` at 4096².
struct Transpose;

/// The speed goal's matrix side.
const TRANSPOSE_SIDE: u32 = 4096;

impl Check for Transpose {
    fn run(&self, program: &Program, device: &mut Device, budget: &Budget) -> Result<u32, Failure> {
        let fixed = transpose::variant("transpose-padded");
        let yours = as_variant(program.kernel(&fixed.kernel)?, fixed);
        let largest = budget.size(100, 2_000);
        let strategy = (side(largest), side(largest), any::<u64>());
        property::run(device, budget, strategy, |device, &(rows, cols, seed)| {
            let input = random_matrix((rows * cols) as usize, seed);
            let seen = Observed::new()
                .fact("matrix", format!("{rows} × {cols}"))
                .launch(transpose::shape(rows, cols));
            match transpose::run(device, &yours, &input, rows, cols) {
                Err(error) => seen.error(error),
                Ok(outcome) => {
                    let want = transpose::transpose_cpu(&input, rows as usize, cols as usize);
                    let comparison = compare_exact(&exact(&outcome.result), &exact(&want));
                    seen.reported(outcome.report)
                        .wrong(wrong_from("out", &comparison))
                }
            }
        })
    }

    fn goals(&self, program: &Program, device: &mut Device) -> Result<Vec<Outcome>, Failure> {
        let fixed = transpose::variant("transpose-padded");
        let yours = as_variant(program.kernel(&fixed.kernel)?, fixed);
        let (rows, cols) = (64, 96);
        let input = random_matrix((rows * cols) as usize, 5);
        let case = format!("a {rows} × {cols} matrix, {}", transpose::shape(rows, cols));
        let banks = goal::banks(device, program, 1, &case, |device| {
            transpose::run(device, &yours, &input, rows, cols)
                .map(|outcome| vec![outcome.report])
                .map_err(|error| Failure::Setup(error.to_string()))
        })?;
        let rival = transpose::variant("transpose-shared");
        let side = TRANSPOSE_SIDE;
        let case = format!("a {side} × {side} matrix");
        if !device.kind().is_cuda() {
            let speed = goal::beat(device, rival.name, &case, |_| Ok(()), |_| Ok(()))?;
            return Ok(vec![banks, speed]);
        }
        let setup = |error: harness::HarnessError| Failure::Setup(error.to_string());
        let matrix = device
            .upload(&random_matrix((side * side) as usize, 6), "in")
            .map_err(setup)?;
        let out = device
            .zeros::<f32>((side * side) as usize, "out")
            .map_err(setup)?;
        let (matrix, out) = (&matrix, &out);
        let shape = transpose::shape(side, side);
        let launch = |kernel: KernelSource| {
            move |device: &mut Device| {
                device.launch_async(
                    &kernel,
                    shape,
                    &[
                        Arg::from(matrix),
                        Arg::from(out),
                        Arg::U32(side),
                        Arg::U32(side),
                    ],
                )
            }
        };
        let speed = goal::beat(
            device,
            rival.name,
            &case,
            launch(yours.kernel),
            launch(rival.kernel),
        )?;
        Ok(vec![banks, speed])
    }
}

/// `tiled-2x2`'s signature on 16 × 16 blocks covering C in 32 × 32 tiles, and on a GPU a speed
/// goal: faster than `tiled` at 2048².
struct Tiled2x2;

/// The speed goal's matrices: 2048², large enough that launch overhead is noise.
const SPEED_SIDE: u32 = 2048;

impl Check for Tiled2x2 {
    fn run(&self, program: &Program, device: &mut Device, budget: &Budget) -> Result<u32, Failure> {
        let fixed = variant("tiled-2x2");
        let yours = as_variant(program.kernel(&fixed.kernel)?, fixed);
        let largest = budget.size(48, 300);
        let strategy = (side(largest), side(largest), side(largest), any::<u64>());
        property::run(device, budget, strategy, |device, &(m, n, k, seed)| {
            let dims = Dims::new(m, n, k);
            matmul_case(device, &yours, dims, seed, tiled_2x2_shape(dims))
        })
    }

    fn goals(&self, program: &Program, device: &mut Device) -> Result<Vec<Outcome>, Failure> {
        let yours = program.kernel(&variant("tiled-2x2").kernel)?;
        let rival = variant("tiled");
        let dims = Dims::square(SPEED_SIDE);
        let case = format!("{SPEED_SIDE} × {SPEED_SIDE} matrices");
        if !device.kind().is_cuda() {
            return Ok(vec![goal::beat(
                device,
                rival.name,
                &case,
                |_| Ok(()),
                |_| Ok(()),
            )?]);
        }
        let setup = |error: harness::HarnessError| Failure::Setup(error.to_string());
        let a = device
            .upload(&random_matrix(dims.a_len(), 1), "A")
            .map_err(setup)?;
        let b = device
            .upload(&random_matrix(dims.b_len(), 2), "B")
            .map_err(setup)?;
        let c = device.zeros::<f32>(dims.c_len(), "C").map_err(setup)?;
        let (a, b, c) = (&a, &b, &c);
        let launch = |kernel: KernelSource, shape: LaunchShape| {
            move |device: &mut Device| {
                device.launch_async(
                    &kernel,
                    shape,
                    &[
                        Arg::from(a),
                        Arg::from(b),
                        Arg::from(c),
                        Arg::U32(dims.m),
                        Arg::U32(dims.n),
                        Arg::U32(dims.k),
                    ],
                )
            }
        };
        Ok(vec![goal::beat(
            device,
            rival.name,
            &case,
            launch(yours, tiled_2x2_shape(dims)),
            launch(rival.kernel, tiled_shape(dims)),
        )?])
    }
}

/// Generated A, B of `dims`, C from `yours` launched with `shape`, within the bound per element.
fn matmul_case(
    device: &mut Device,
    yours: &Ch7Variant,
    dims: Dims,
    seed: u64,
    shape: LaunchShape,
) -> Observed {
    let a = random_matrix(dims.a_len(), seed);
    let b = random_matrix(dims.b_len(), seed.wrapping_add(1));
    let seen = Observed::new()
        .fact(
            "sizes",
            format!("M {} · N {} · K {}", dims.m, dims.n, dims.k),
        )
        .launch(shape);
    match run_matmul(device, yours, &a, &b, dims, shape, 0) {
        Err(error) => seen.error(error),
        Ok(outcome) => {
            let (want, scale) = matmul_f64(&a, &b, dims);
            let check = MatmulCheck::new(&outcome.result, &want, &scale, dims.k);
            seen.reported(outcome.report)
                .wrong(matmul_wrong(&check, dims, &scale))
        }
    }
}

/// The first element of C outside its bound: where it is, its bound, and what a NaN means here.
fn matmul_wrong(check: &MatmulCheck, dims: Dims, scale: &[f64]) -> Option<Wrong> {
    let first = check.comparison.first_mismatches.first()?;
    let index = first.index;
    let columns = dims.n.max(1) as usize;
    let summary = property::how_many_differ(
        check.comparison.mismatch_count,
        check.comparison.len,
        "values",
    );
    let wrong = Wrong {
        what: format!(
            "C[{index}] (row {}, column {})",
            index / columns,
            index % columns
        ),
        expected: property::within_bound(first.want, element_bound(dims.k, scale[index])),
        got: (first.got as f32).to_string(),
        summary,
    };
    // C is filled with NaN before the launch
    Some(wrong.unwritten_if(
        "NaN",
        "C starts as NaN: a NaN is an element no thread wrote",
    ))
}

/// `kernel(const float *A, const float *B, float *C, unsigned M, unsigned N, unsigned K)`
/// on any 2D block covering C.
struct Naive;

impl Check for Naive {
    fn run(&self, program: &Program, device: &mut Device, budget: &Budget) -> Result<u32, Failure> {
        let fixed = variant("naive");
        let yours = as_variant(program.kernel(&fixed.kernel)?, fixed);
        let largest = budget.size(40, 300);
        let strategy = (
            side(largest),
            side(largest),
            side(largest),
            block(),
            any::<u64>(),
        );
        property::run(
            device,
            budget,
            strategy,
            |device, &(m, n, k, block, seed)| {
                let dims = Dims::new(m, n, k);
                matmul_case(device, &yours, dims, seed, covering_shape(dims, block))
            },
        )
    }
}

/// The same signature on 16 × 16 blocks covering C.
struct Tiled;

impl Check for Tiled {
    fn run(&self, program: &Program, device: &mut Device, budget: &Budget) -> Result<u32, Failure> {
        let fixed = variant("tiled");
        let yours = as_variant(program.kernel(&fixed.kernel)?, fixed);
        let largest = budget.size(40, 300);
        let strategy = (side(largest), side(largest), side(largest), any::<u64>());
        property::run(device, budget, strategy, |device, &(m, n, k, seed)| {
            let dims = Dims::new(m, n, k);
            matmul_case(device, &yours, dims, seed, tiled_shape(dims))
        })
    }
}
