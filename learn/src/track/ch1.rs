//! Chapter 1: threads, blocks and grids.

use ch1_map::testing::{data, length, threads_per_block};
use ch1_map::{
    covering_shape, exact, floats, run_saxpy, run_scalar_multiply, saxpy_cpu, scalar_multiply_cpu,
    variant,
};
use harness::verify::compare_exact;
use harness::{Device, Expect, LaunchShape};
use proptest::prelude::*;

use super::{as_variant, fix_it, write_it};
use crate::check::{Check, Failure};
use crate::exercise::{Exercise, Fails};
use crate::program::Program;
use crate::property::{self, Budget, Observed, excerpt, first_index, wrong_from};

pub(super) fn exercises() -> Vec<Exercise> {
    vec![
        Exercise {
            title: "Threads past the end",
            statement: "y = a · x, one thread per element. The host launches ⌈n / blockDim.x⌉ \
                blocks of any size (sometimes a few more), so unless the block divides n the \
                last block has threads with no element: they read x and write y past the end \
                of both arrays. Keep every thread inside the arrays.",
            hints: &[
                "Look at the line that reads x[i] and writes y[i]: which values of i do the \
                 last block's threads compute when the block size does not divide n (n = 33 \
                 with blocks of 32; or the report's smallest case)?",
                "Threads whose i is n or more must do nothing: put the line under if (i < n).",
            ],
            taught: "A grid is made of whole blocks, so it usually has more threads than \
                elements, and every kernel indexed by a global thread id needs its bounds guard. \
                On a GPU the stray writes often land somewhere harmless and nothing complains; \
                memcheck names them.",
            ..fix_it(
                variant("scalar-multiply-no-guard"),
                variant("scalar-multiply"),
                ScalarMultiply,
                Fails::at_bug(Expect::OutOfBounds),
            )
        },
        Exercise {
            title: "Every block does the same work",
            statement: "y = a · x again, on ⌈n / blockDim.x⌉ blocks of any size. As soon as n \
                needs more than one block it goes wrong: every block writes the same first \
                elements, and the elements past the first block are never written (the blocks' \
                stores agree, so only the result shows it). Give every thread its own element.",
            hints: &[
                "Which element does thread 0 of block 1 handle? And thread 0 of block 0?",
                "threadIdx.x counts threads within a block. A thread's place in the whole grid \
                 is blockIdx.x * blockDim.x + threadIdx.x.",
            ],
            taught: "threadIdx.x numbers a thread within its block only; the global index adds \
                the block's offset, blockIdx.x * blockDim.x. With one block the two agree, \
                which is why a test with small inputs passes the wrong one.",
            ..fix_it(
                variant("scalar-multiply-thread-index-only"),
                variant("scalar-multiply"),
                ScalarMultiply,
                // Every block stores the same value into y[i], so the stores are no race;
                // the elements past the first block are never written.
                Fails::wrong_result(),
            )
        },
        Exercise {
            title: "Saxpy, rounded once",
            statement: "Write saxpy: y[i] = a · x[i] + y[i] for every i < n, one thread per \
                element, with a bounds guard. The host launches ⌈n / blockDim.x⌉ blocks of any \
                size (sometimes a few more) and compares y bit for bit with a.mul_add(x, y): \
                NVRTC contracts a * x[i] + y[i] into one fma.rn.f32, which rounds once, where \
                a CPU computing a * x + y rounds twice.",
            hints: &[
                "Start from scalar-multiply: the global index, the guard, one element per \
                 thread. This time y is read as well as written.",
                "Only where i < n, y[i] becomes a times x[i] plus y[i]: the compiler turns \
                 the multiply and the add into one fma, which is what the host's mul_add \
                 computes.",
            ],
            taught: "Both a fused and an unfused a·x + y are correct IEEE arithmetic; they \
                just round differently. Make the reference do what the GPU does (mul_add) \
                rather than loosening a bit-for-bit comparison into a tolerance that would also \
                let real bugs through.",
            ..write_it(
                variant("saxpy"),
                "y[i] = a * x[i] + y[i] for the thread's i, if i < n",
                Saxpy,
            )
        },
    ]
}

/// `kernel(const float *x, float a, float *y, unsigned n)` on ⌈n / block⌉ blocks and up to
/// three more, compared bit for bit with `a * x` on the CPU.
pub(super) struct ScalarMultiply;

impl Check for ScalarMultiply {
    fn run(&self, program: &Program, device: &mut Device, budget: &Budget) -> Result<u32, Failure> {
        let fixed = variant("scalar-multiply");
        let yours = as_variant(program.kernel(&fixed.kernel)?, fixed);
        let cap = budget.size(3_000, 2_000_000);
        let strategy = (
            length(cap).prop_filter("within the budget", move |&n| n <= cap),
            data(),
            any::<u64>(),
            any::<u32>(),
            threads_per_block(),
            0u32..=3,
        );
        property::run(
            device,
            budget,
            strategy,
            |device, &(n, data, seed, a_bits, threads, extra)| {
                let x = floats(n, data, seed);
                let a = f32::from_bits(a_bits);
                let shape = LaunchShape::linear(covering_shape(n, threads).grid.x + extra, threads);
                let seen = Observed::new()
                    .fact("n", n)
                    .launch(shape)
                    .fact("a", format!("{a:?}"));
                match run_scalar_multiply(device, &yours, &x, a, shape, 0) {
                    Err(error) => seen.error(error),
                    Ok(outcome) => {
                        let want = scalar_multiply_cpu(&x, a);
                        let comparison = compare_exact(&exact(&outcome.result), &exact(&want));
                        seen.fact("x", excerpt(&x, first_index(&comparison)))
                            .reported(outcome.report)
                            .wrong(wrong_from("y", &comparison).map(|wrong| {
                                // y starts as NaN before the launch
                                wrong.unwritten_if(
                                    "NaN",
                                    "y starts as NaN: a NaN is an element no thread wrote",
                                )
                            }))
                    }
                }
            },
        )
    }
}

/// `saxpy(float a, const float *x, float *y, unsigned n)` on ⌈n / block⌉ blocks and up to three
/// more, compared bit for bit with `a.mul_add(x, y)`.
struct Saxpy;

impl Check for Saxpy {
    fn run(&self, program: &Program, device: &mut Device, budget: &Budget) -> Result<u32, Failure> {
        let fixed = variant("saxpy");
        let yours = as_variant(program.kernel(&fixed.kernel)?, fixed);
        let cap = budget.size(3_000, 2_000_000);
        let strategy = (
            length(cap).prop_filter("within the budget", move |&n| n <= cap),
            data(),
            any::<u64>(),
            threads_per_block(),
            0u32..=3,
        );
        property::run(
            device,
            budget,
            strategy,
            |device, &(n, data, seed, threads, extra)| {
                let x = floats(n, data, seed);
                let y = floats(n, data, seed.wrapping_add(1));
                // From the data, not from shrinking bits towards a tiny a, so a failing case
                // shows values a reader can follow.
                let a = floats(1, data, seed.wrapping_add(2))[0];
                let shape = LaunchShape::linear(covering_shape(n, threads).grid.x + extra, threads);
                let seen = Observed::new()
                    .fact("n", n)
                    .launch(shape)
                    .fact("a", format!("{a:?}"));
                match run_saxpy(device, &yours, a, &x, &y, shape) {
                    Err(error) => seen.error(error),
                    Ok(outcome) => {
                        let want = saxpy_cpu(a, &x, &y);
                        let comparison = compare_exact(&exact(&outcome.result), &exact(&want));
                        let at = first_index(&comparison);
                        seen.fact("x", excerpt(&x, at))
                            .fact("y", excerpt(&y, at))
                            .reported(outcome.report)
                            .wrong(wrong_from("y", &comparison))
                    }
                }
            },
        )
    }
}
