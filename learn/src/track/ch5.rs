//! Chapter 5: a mutex from atomics, and the dot product.

use ch5_mutex_dot::testing::{any_threads, blocks, data, length, power_of_two_threads};
use ch5_mutex_dot::{DotCheck, run_dot, run_increment, variant, vectors};
use harness::{Device, Expect, LaunchShape};
use proptest::prelude::*;

use super::{as_variant, fix_it};
use crate::check::{Check, Failure, Wrong};
use crate::exercise::{Exercise, Fails};
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
                "Racecheck names the increment: two blocks inside the lock at once. What lies \
                 between the read of *mutex and the write that takes it?",
                "Take the lock in one atomic step: while (atomicCAS((int *)mutex, 0, 1) != 0) \
                 {}. Release it with atomicExch, with __threadfence() before it so the \
                 increment is visible before the lock is free.",
            ],
            taught: "A lock must be taken by one indivisible test-and-set: atomicCAS. Releasing \
                it needs a fence first, so the next holder sees what this one wrote.",
            ..fix_it(
                variant("read-then-write-lock"),
                variant("mutex-increment"),
                MutexIncrement,
                Fails::at_bug(Expect::Race),
            )
        },
        Exercise {
            title: "A typo worth 0.3%",
            statement: "A dot product: each block multiplies its grid-stride share of a and b, \
                reduces the products in shared memory with a tree, and writes one partial sum; \
                the host adds the partial sums. Any grid, a power-of-two block. The result is \
                a few tenths of a percent off, too little for a guessed tolerance to notice \
                and far outside the rounding error the algorithm can make. Racecheck sees the \
                same slip: thread tid reads s_block[tid + 1] while thread tid + 1 updates it.",
            hints: &[
                "Racecheck names the tree's addition: what should thread tid add at the step \
                 of stride i?",
                "s_block[tid + 1] should be s_block[tid + i].",
            ],
            taught: "A tolerance derived from the algorithm's error bound (here γ · Σ|aᵢbᵢ|) \
                catches a bug a guessed 1% tolerance lets through. Small wrong answers are \
                still wrong answers.",
            ..fix_it(
                variant("partial-dot-typo"),
                variant("partial-dot"),
                PartialDot,
                Fails::at_bug(Expect::Race),
            )
        },
    ]
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
            let seen = Observed::new().fact("launch", shape);
            match run_increment(device, &yours, shape) {
                Err(error) => seen.error(error),
                Ok(outcome) => {
                    let wrong = (outcome.result != blocks as i32).then(|| Wrong {
                        what: "x[0]".into(),
                        expected: blocks.to_string(),
                        got: outcome.result.to_string(),
                        summary: None,
                    });
                    seen.findings(outcome.report.findings).wrong(wrong)
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
            length(cap).prop_map(move |n| n.min(cap)),
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
                    .fact("launch", shape)
                    .fact("a", excerpt(&a, None))
                    .fact("b", excerpt(&b, None));
                match run_dot(device, &yours, &a, &b, shape) {
                    Err(error) => seen.error(error),
                    Ok(outcome) => {
                        let check = DotCheck::new(outcome.result, &a, &b, shape);
                        let wrong = (!check.is_within()).then(|| Wrong {
                            what: "a · b".into(),
                            expected: format!("{:.6} (± {:.1e})", check.want, check.bound),
                            got: check.got.to_string(),
                            summary: Some(format!("{:.2}% off", check.relative_error() * 100.0)),
                        });
                        seen.findings(outcome.report.findings).wrong(wrong)
                    }
                }
            },
        )
    }
}
