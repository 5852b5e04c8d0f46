//! Chapter 5: a mutex from atomics, and the dot product.

use ch5_mutex_dot::testing::{any_threads, blocks, data, length, power_of_two_threads};
use ch5_mutex_dot::{DotCheck, run_dot, run_increment, variant, vectors};
use harness::{Device, Expect, LaunchShape};
use proptest::prelude::*;

use super::{as_variant, fix_it, write_it};
use crate::check::{Check, Failure, Wrong};
use crate::exercise::{Exercise, Fails, PartFixed};
use crate::program::Program;
use crate::property::{self, Budget, Observed, excerpt};

pub(super) fn exercises() -> Vec<Exercise> {
    vec![
        Exercise {
            title: "A lock that two blocks can take",
            statement: "Thread 0 of every block takes a lock, adds one to x[0], and releases \
                it; after B blocks x[0] should be B. This lock is taken by reading *mutex and \
                then writing 1: two blocks can both read 0 before either writes, and both \
                enter.",
            hints: &[
                "Racecheck names the increment: two blocks' increments that nothing orders. \
                 Either both are inside the lock at once (what lies between the read of \
                 *mutex and the write that takes it?), or one holder's increment is not yet \
                 visible to the next (what orders it before the lock is free again?).",
                "Take the lock in one atomic step: while (atomicCAS((int *)mutex, 0, 1) != 0) \
                 {}, then __threadfence(), so this holder sees what the last one wrote. \
                 Release it with __threadfence() and then atomicExch, so the increment is \
                 visible before the lock is free.",
            ],
            part_fixed: &[PartFixed {
                once: "atomicCAS(",
                hints: &[
                    "The lock is taken in one atomic step now, so one block holds it at a time. \
                     What is left is what an atomic does not do: it orders itself alone. The \
                     holder's increment of x[0] is a plain write, and nothing makes it visible \
                     before the lock is free again, or keeps the next holder from reading an \
                     older x[0].",
                    "Put __threadfence() right after the loop that takes the lock, and another \
                     before the release; release with atomicExch((int *)mutex, 0), so that \
                     freeing the lock is one atomic step too.",
                ],
            }],
            taught: "A lock must be taken by one indivisible test-and-set: atomicCAS, with a \
                fence after it. Releasing it needs a fence first, so the next holder sees what \
                this one wrote.",
            ..fix_it(
                variant("read-then-write-lock"),
                variant("mutex-increment"),
                MutexIncrement,
                Fails::at_bug(Expect::Race),
            )
        },
        Exercise {
            title: "A typo a tolerance would miss",
            statement: "A dot product: each block multiplies its grid-stride share of a and b, \
                reduces the products in shared memory with a tree, and writes one partial sum; \
                the host adds the partial sums. Any grid, a power-of-two block. At the \
                chapter's sizes the result is a few tenths of a percent off (small cases miss \
                by more), too little for a guessed tolerance to notice \
                and far outside the rounding error the algorithm can make. Racecheck sees the \
                same slip: thread tid reads s_block[tid + 1] while thread tid + 1 updates it.",
            hints: &[
                "Racecheck names the tree's addition, and the sum stays a little off even \
                 when nothing races there: what should thread tid add at the step of stride i?",
                "s_block[tid + 1] should be s_block[tid + i].",
            ],
            taught: "A tolerance derived from the algorithm's error bound (here γ · Σ|aᵢbᵢ|) \
                catches a bug a guessed 1% tolerance lets through. Small wrong answers are \
                still wrong answers.",
            ..fix_it(
                variant("partial-dot-typo"),
                variant("partial-dot"),
                PartialDot,
                Fails::at_bug(Expect::Race).and_a_wrong_result(),
            )
        },
        Exercise {
            title: "Each block adds into c",
            statement: "A dot product in one launch: write dot_atomic_add(const float *a, \
                const float *b, unsigned int n, float *c). Each thread adds its grid-stride \
                share of the products, four at a time from float4 loads (the n % 4 at the end \
                one by one), block_sum (given; declare the __shared__ float warp_sums[32] it \
                takes) adds the block's, and thread 0 adds that into *c with atomicAdd. The host zeroes *c and launches any grid of a power-of-two \
                block of 32 to 1024 threads; the result must be within the bound of a chain of \
                one addition per block, in any order.",
            hints: &[
                "The loop of dot-vectorized: for (j = first; j < n / 4; j += stride) add the \
                 four products of a4[j] and b4[j]; then j from n / 4 * 4 + first for the tail.",
                "Reduce the thread's sum over the block with block_sum, giving it a __shared__ \
                 array of one float per warp; then one thread of the block adds the block's sum \
                 into c, atomically, since every block adds into c at once.",
            ],
            taught: "atomicAdd into one float replaces the lock, the counter and the last \
                block: no addition is lost, but their order is the blocks' arrival order, so \
                the error bound counts a chain of one addition per block and the last bits of \
                the result may change from run to run.",
            ..write_it(
                variant("dot-atomic-add"),
                "sum this thread's products from float4 loads, then block_sum, then one atomicAdd into *c",
                DotRung("dot-atomic-add"),
            )
        },
        Exercise {
            title: "The last block adds them up",
            statement: "A dot product in one launch that gives the same bits every run: write \
                dot_one_launch. Each block computes its sum as dot-atomic-add does, thread 0 \
                writes it to partial[blockIdx.x], fences, and takes a ticket with \
                atomicInc(count, gridDim.x - 1), and fences again; the block that draws the last \
                ticket adds every block sum in a fixed order (thread t: sums t, t + blockDim, \
                …, then block_sum) and writes *c. *count starts at 0 and must be 0 after the \
                launch (atomicInc wraps). Any grid, a power-of-two block of 32 to 1024 threads.",
            hints: &[
                "Tell the whole block whether it is last through a __shared__ bool that thread \
                 0 sets, then __syncthreads() before anyone reads it.",
                "The first __threadfence(), between storing the block's sum in partial and \
                 taking the ticket, makes the sum visible before the count says it is there. \
                 The second, in thread 0 right after its atomicInc and before the \
                 __syncthreads() that tells the block, makes the other blocks' sums visible \
                 to the last block: PTX's memory model, which this exercise is checked under, \
                 asks for it there (a fence after the barrier comes too late for the other \
                 threads).",
            ],
            taught: "The last block to arrive can finish the job inside the same launch: \
                publish, fence, count with an atomic, and the block that counts last knows \
                everything before it is visible. The sum's order is fixed, so its bits are the \
                same every run.",
            ..write_it(
                variant("dot-one-launch"),
                "block sum as in dot-atomic-add; publish it, fence, take a ticket; the last block fences and adds all the block sums into *c",
                DotRung("dot-one-launch"),
            )
        },
    ]
}

/// A one-launch dot kernel of `name`'s signature on any grid of power-of-two blocks of 32 to
/// 1024 threads (256 on the emulator), within its bound.
struct DotRung(&'static str);

impl Check for DotRung {
    fn run(&self, program: &Program, device: &mut Device, budget: &Budget) -> Result<u32, Failure> {
        let fixed = variant(self.0);
        let yours = as_variant(program.kernel(&fixed.kernel)?, fixed);
        let cap = budget.size(4_000, 4_000_000);
        let on_gpu = budget.on_gpu;
        let threads = power_of_two_threads()
            .prop_map(move |t| if on_gpu { t.max(32) } else { t.clamp(32, 256) });
        let strategy = (
            length(cap).prop_filter("within the budget", move |&n| n <= cap),
            data(),
            any::<u64>(),
            blocks(on_gpu).prop_map(move |b| if on_gpu { b } else { b.min(16) }),
            threads,
        );
        property::run(
            device,
            budget,
            strategy,
            |device, &(n, data, seed, blocks, threads)| {
                let (a, b) = vectors(n, data, seed);
                let shape = LaunchShape::linear(blocks, threads);
                let seen = Observed::new()
                    .fact("n", n)
                    .launch(shape)
                    .fact("a", excerpt(&a, None))
                    .fact("b", excerpt(&b, None));
                // Held to PTX's memory model, as the chapter's kernels are: a block that reads
                // what other blocks published needs its own fence after the atomic that told it.
                let run = device.with_memory_model(ptx_emu::MemoryModel::Ptx, |device| {
                    run_dot(device, &yours, &a, &b, shape)
                });
                match run {
                    Err(error) => seen.error(error),
                    Ok(outcome) => {
                        let check = DotCheck::for_step(yours.kind, outcome.result, &a, &b, shape);
                        let wrong = (!check.is_within()).then(|| Wrong {
                            what: "a · b".into(),
                            expected: property::within_bound(check.want, check.bound),
                            got: check.got.to_string(),
                            summary: Some(format!("{:.2}% off", check.relative_error() * 100.0)),
                        });
                        seen.reported(outcome.report).wrong(wrong)
                    }
                }
            },
        )
    }
}

/// `kernel(volatile int *mutex, int *x)` on any grid and block: x[0] must count the blocks.
struct MutexIncrement;

impl Check for MutexIncrement {
    fn run(&self, program: &Program, device: &mut Device, budget: &Budget) -> Result<u32, Failure> {
        let fixed = variant("mutex-increment");
        let yours = as_variant(program.kernel(&fixed.kernel)?, fixed);
        let strategy = (blocks(budget.on_gpu), any_threads());
        property::run(device, budget, strategy, |device, &(blocks, threads)| {
            let shape = LaunchShape::linear(blocks, threads);
            let seen = Observed::new().launch(shape);
            match run_increment(device, &yours, shape) {
                Err(error) => seen.error(error),
                Ok(outcome) => {
                    let wrong = (outcome.result != blocks as i32).then(|| Wrong {
                        what: "x[0]".into(),
                        expected: blocks.to_string(),
                        got: outcome.result.to_string(),
                        summary: None,
                    });
                    seen.reported(outcome.report).wrong(wrong)
                }
            }
        })
    }
}

/// `kernel(const float *a, const float *b, unsigned n, float *partial)` on any grid of a
/// power-of-two block, within the dot product's error bound.
struct PartialDot;

impl Check for PartialDot {
    fn run(&self, program: &Program, device: &mut Device, budget: &Budget) -> Result<u32, Failure> {
        let fixed = variant("partial-dot");
        let yours = as_variant(program.kernel(&fixed.kernel)?, fixed);
        let cap = budget.size(4_000, 4_000_000);
        let on_gpu = budget.on_gpu;
        let threads = power_of_two_threads().prop_map(move |t| if on_gpu { t } else { t.min(256) });
        let strategy = (
            length(cap).prop_filter("within the budget", move |&n| n <= cap),
            data(),
            any::<u64>(),
            blocks(on_gpu).prop_map(move |b| if on_gpu { b } else { b.min(16) }),
            threads,
        );
        property::run(
            device,
            budget,
            strategy,
            |device, &(n, data, seed, blocks, threads)| {
                let (a, b) = vectors(n, data, seed);
                let shape = LaunchShape::linear(blocks, threads);
                let seen = Observed::new()
                    .fact("n", n)
                    .launch(shape)
                    .fact("a", excerpt(&a, None))
                    .fact("b", excerpt(&b, None));
                // Held to PTX's memory model, as the chapter's kernels are: a block that reads
                // what other blocks published needs its own fence after the atomic that told it.
                let run = device.with_memory_model(ptx_emu::MemoryModel::Ptx, |device| {
                    run_dot(device, &yours, &a, &b, shape)
                });
                match run {
                    Err(error) => seen.error(error),
                    Ok(outcome) => {
                        let check = DotCheck::new(outcome.result, &a, &b, shape);
                        let wrong = (!check.is_within()).then(|| Wrong {
                            what: "a · b".into(),
                            expected: property::within_bound(check.want, check.bound),
                            got: check.got.to_string(),
                            summary: Some(format!("{:.2}% off", check.relative_error() * 100.0)),
                        });
                        seen.reported(outcome.report).wrong(wrong)
                    }
                }
            },
        )
    }
}
