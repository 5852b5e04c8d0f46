//! Chapter 7: matrix multiplication.

use ch7_matmul::testing::{block, side};
use ch7_matmul::{
    Ch7Variant, Dims, MatmulCheck, covering_shape, matmul_f64, random_matrix, run_matmul,
    tiled_shape, variant,
};
use harness::{Device, Expect, LaunchShape};
use proptest::prelude::*;

use super::{as_variant, fix_it};
use crate::check::{Check, Failure};
use crate::exercise::{Exercise, Fails};
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
                "memcheck names the write to C: which threads have row >= M or col >= N?",
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
    ]
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
        .fact("launch", shape);
    match run_matmul(device, yours, &a, &b, dims, shape, 0) {
        Err(error) => seen.error(error),
        Ok(outcome) => {
            let (want, scale) = matmul_f64(&a, &b, dims);
            let check = MatmulCheck::new(&outcome.result, &want, &scale, dims.k);
            seen.findings(outcome.report.findings)
                .wrong(wrong_from("C", &check.comparison))
        }
    }
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
