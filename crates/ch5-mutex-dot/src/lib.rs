//! Chapter 5: a mutex built from atomics, and the dot product.
//!
//! Every variant in [`VARIANTS`] is one kernel file in `kernels/ch5_mutex_dot/`, in teaching
//! order; the walk-through, the tests and the book all read this list.

use std::fmt;

use harness::rand::Rng;
use harness::verify::bounds;
use harness::{
    Arg, Device, Expect, HarnessError, LaunchReport, LaunchShape, Result, Variant, kernel,
};

#[cfg(feature = "testing")]
pub mod testing;
#[cfg(feature = "walkthrough")]
pub mod walkthrough;

/// The lock demonstrations' launch: only thread 0 of each block takes the lock, so the
/// counter should end at 12, however many threads a block has.
pub const LOCK_SHAPE: LaunchShape = LaunchShape::linear(12, 32);

/// The relative tolerance a hurried test might pick; the broken reduction passes it.
pub const LOOSE_RELATIVE_TOLERANCE: f64 = 1e-2;

/// The dot kernels' shared array holds one float per thread of the largest block.
pub const MAX_DOT_THREADS: u32 = 1024;

/// How a variant is driven, since its kernel's parameters say what it computes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// `kernel(int *mutex, unsigned *order, unsigned *length)`: each block appends its index.
    LockOrder,
    /// `kernel(int *mutex, int *x)`: thread 0 of each block adds one to `x[0]`.
    Increment,
    /// `kernel(const float *a, const float *b, unsigned n, float *partial)`: one sum per
    /// block, added on the host.
    PartialDot,
    /// `kernel(const float *a, const float *b, unsigned n, float *c, int *mutex)`: the blocks
    /// add into `*c` on the device.
    DotMutex,
    /// As [`Step::PartialDot`], with warp shuffles: blocks of 32 to 1024 threads. `vectorized`
    /// kernels read float4s, four products a loop step.
    WarpPartialDot { vectorized: bool },
    /// `kernel(a, b, n, partial, unsigned *count, float *c)`: one launch; the last block to
    /// finish adds the block sums in `partial` into `*c`. Vectorized, blocks of 32 to 1024.
    OneLaunchDot,
    /// `kernel(a, b, n, float *c)`: one launch, each block adds its sum into `*c` with
    /// `atomicAdd` (`*c` zeroed first). Vectorized, blocks of 32 to 1024.
    AtomicDot,
}

impl Step {
    /// Whether a variant of this step computes a dot product.
    pub fn is_dot(self) -> bool {
        !matches!(self, Self::LockOrder | Self::Increment)
    }

    /// The warp-shuffle kernels need whole warps.
    pub fn min_threads(self) -> u32 {
        match self {
            Self::WarpPartialDot { .. } | Self::OneLaunchDot | Self::AtomicDot => 32,
            _ => 1,
        }
    }
}

pub type Ch5Variant = Variant<Step>;

pub const VARIANTS: &[Ch5Variant] = &[
    Variant {
        name: "lock-unlock",
        kernel: kernel!("ch5_mutex_dot", "01_lock_unlock", "lock_unlock"),
        expect: Expect::Correct,
        summary: "a Lock from atomicCAS + __threadfence + atomicExch: each block appends its index in turn",
        kind: Step::LockOrder,
    },
    Variant {
        name: "mutex-increment",
        kernel: kernel!("ch5_mutex_dot", "02_mutex_increment", "mutex_increment"),
        expect: Expect::Correct,
        summary: "thread 0 of each block adds one to a counter under the lock",
        kind: Step::Increment,
    },
    Variant {
        name: "read-then-write-lock",
        kernel: kernel!(
            "ch5_mutex_dot",
            "03_read_then_write_lock",
            "read_then_write_lock"
        ),
        expect: Expect::Race,
        summary: "a lock taken by `while (*mutex != 0) {} *mutex = 1;`: blocks get in together",
        kind: Step::Increment,
    },
    Variant {
        name: "partial-dot",
        kernel: kernel!("ch5_mutex_dot", "04_partial_dot", "partial_dot"),
        expect: Expect::Correct,
        summary: "dot product: a shared-memory tree per block, the block sums added on the host",
        kind: Step::PartialDot,
    },
    Variant {
        name: "partial-dot-typo",
        kernel: kernel!("ch5_mutex_dot", "05_partial_dot_typo", "partial_dot_typo"),
        expect: Expect::WrongResult,
        summary: "s_block[tid + 1] for s_block[tid + i]: a few tenths of a percent off",
        kind: Step::PartialDot,
    },
    Variant {
        name: "dot-mutex",
        kernel: kernel!("ch5_mutex_dot", "06_dot_mutex", "dot_mutex"),
        expect: Expect::Correct,
        summary: "dot product finished on the device: each block adds its sum under the lock",
        kind: Step::DotMutex,
    },
    Variant {
        name: "dot-warp-shuffle",
        kernel: kernel!("ch5_mutex_dot", "07_dot_warp_shuffle", "dot_warp_shuffle"),
        expect: Expect::Correct,
        summary: "each warp adds its sums in registers with __shfl_down_sync: one barrier per block",
        kind: Step::WarpPartialDot { vectorized: false },
    },
    Variant {
        name: "dot-vectorized",
        kernel: kernel!("ch5_mutex_dot", "08_dot_vectorized", "dot_vectorized"),
        expect: Expect::Correct,
        summary: "float4 loads: four values of each vector per instruction",
        kind: Step::WarpPartialDot { vectorized: true },
    },
    Variant {
        name: "dot-one-launch",
        kernel: kernel!("ch5_mutex_dot", "09_dot_one_launch", "dot_one_launch"),
        expect: Expect::Correct,
        summary: "one launch: the last block to finish adds the block sums, in a fixed order",
        kind: Step::OneLaunchDot,
    },
    Variant {
        name: "dot-atomic-add",
        kernel: kernel!("ch5_mutex_dot", "10_dot_atomic_add", "dot_atomic_add"),
        expect: Expect::Correct,
        summary: "one launch: each block adds its sum into c with atomicAdd, in the order blocks finish",
        kind: Step::AtomicDot,
    },
];

/// The variant named `name`; panics only on a typo in this crate, caught by its tests.
pub fn variant(name: &str) -> &'static Ch5Variant {
    match harness::find_variant(VARIANTS, name) {
        Ok(variant) => variant,
        Err(message) => panic!("{message}"),
    }
}

// ANCHOR: cpu_references
/// The exact dot product of the f32 inputs, up to f64 rounding: every product of two f32 is
/// exact in f64.
pub fn dot_f64(a: &[f32], b: &[f32]) -> f64 {
    a.iter()
        .zip(b)
        .map(|(&x, &y)| f64::from(x) * f64::from(y))
        .sum()
}

/// Σ|aᵢbᵢ|, which the error bound scales with.
pub fn abs_dot_f64(a: &[f32], b: &[f32]) -> f64 {
    a.iter()
        .zip(b)
        .map(|(&x, &y)| (f64::from(x) * f64::from(y)).abs())
        .sum()
}

/// The host's share of partial-dot: the block sums added in order, in f32 as a learner's
/// host code would.
pub fn host_sum_f32(block_sums: &[f32]) -> f32 {
    block_sums.iter().fold(0.0f32, |sum, &value| sum + value)
}
// ANCHOR_END: cpu_references

/// The longest chain of f32 roundings any product goes through in these dot kernels over `n`
/// values with `shape`: its own rounding, the thread's grid-stride loop, the block's tree, and
/// the blocks' sums added one after another (by the host, or under the lock).
pub fn dot_depth(n: usize, shape: LaunchShape) -> u64 {
    let blocks = u64::from(shape.grid.x);
    let threads = u64::from(shape.block.x);
    1 + (n as u64).div_ceil(blocks * threads) + bounds::tree_depth(threads) + blocks
}

/// [`dot_depth`] for the kernels of `step`: float4 loops add four products a step (and a
/// thread may add one more from the tail), and a one-launch dot adds the block sums with the
/// last block's threads and its warp tree instead of one after another on the host.
pub fn step_depth(step: Step, n: usize, shape: LaunchShape) -> u64 {
    let blocks = u64::from(shape.grid.x);
    let threads = u64::from(shape.block.x);
    let vectorized = matches!(
        step,
        Step::WarpPartialDot { vectorized: true } | Step::OneLaunchDot | Step::AtomicDot
    );
    if !vectorized {
        return dot_depth(n, shape);
    }
    let per_thread = 4 * (n as u64 / 4).div_ceil(blocks * threads) + 1;
    let blocks_sum = match step {
        Step::OneLaunchDot => blocks.div_ceil(threads) + bounds::tree_depth(threads),
        // The atomics add the block sums one after another, in whatever order: `blocks`
        // additions, as on the host.
        _ => blocks,
    };
    1 + per_thread + bounds::tree_depth(threads) + blocks_sum
}

/// A dot product checked against the f64 reference under the error bound.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DotCheck {
    pub got: f32,
    pub want: f64,
    /// See [`dot_depth`].
    pub depth: u64,
    pub abs_dot: f64,
    /// `γ_{depth+1} · Σ|aᵢbᵢ|` (Higham, §3.1 for dot products, §4.2 for the summation order).
    pub bound: f64,
}

impl DotCheck {
    /// For the tree kernels: partial-dot and dot-mutex.
    pub fn new(got: f32, a: &[f32], b: &[f32], shape: LaunchShape) -> Self {
        Self::for_step(Step::PartialDot, got, a, b, shape)
    }

    pub fn for_step(step: Step, got: f32, a: &[f32], b: &[f32], shape: LaunchShape) -> Self {
        let depth = step_depth(step, a.len(), shape);
        let abs_dot = abs_dot_f64(a, b);
        Self {
            got,
            want: dot_f64(a, b),
            depth,
            abs_dot,
            bound: bounds::sum_f32(depth, abs_dot),
        }
    }

    pub fn error(&self) -> f64 {
        (f64::from(self.got) - self.want).abs()
    }

    /// The error as a fraction of the exact result.
    pub fn relative_error(&self) -> f64 {
        if self.want == 0.0 {
            if self.error() == 0.0 {
                0.0
            } else {
                f64::INFINITY
            }
        } else {
            self.error() / self.want.abs()
        }
    }

    pub fn is_within(&self) -> bool {
        self.error() <= self.bound
    }

    /// What a guessed tolerance would say: within [`LOOSE_RELATIVE_TOLERANCE`] of the result.
    pub fn passes_loose_tolerance(&self) -> bool {
        self.error() <= LOOSE_RELATIVE_TOLERANCE * self.want.abs()
    }
}

impl fmt::Display for DotCheck {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let relative = if self.want == 0.0 {
            String::new()
        } else {
            format!(" ({:.1e} of the result)", self.relative_error())
        };
        write!(
            f,
            "{} result {} · reference {:.4} · error {:.2e}{relative} · bound {:.2e} (γ_{} · Σ|aᵢbᵢ|)",
            if self.is_within() { "✓" } else { "✗" },
            self.got,
            self.want,
            self.error(),
            self.bound,
            self.depth + 1,
        )
    }
}

/// What the generated inputs look like; the bound must hold for each.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Data {
    /// uniform in [0, 1): every product adds, the easy case for a relative tolerance
    Positive,
    /// uniform in [−1, 1): products cancel, so the result is small against Σ|aᵢbᵢ|
    Signed,
    /// signed, with magnitudes from 2⁻¹² to 2¹²
    WideRange,
}

/// Two vectors of `n` values drawn from `seed`, so any run can be repeated.
pub fn vectors(n: usize, data: Data, seed: u64) -> (Vec<f32>, Vec<f32>) {
    let mut rng = harness::cli::seeded_rng(seed);
    let mut draw = || match data {
        Data::Positive => rng.random::<f32>(),
        Data::Signed => rng.random_range(-1.0f32..1.0),
        Data::WideRange => {
            let magnitude = 2f32.powi(rng.random_range(-12..=12)) * rng.random_range(1.0f32..2.0);
            if rng.random::<bool>() {
                magnitude
            } else {
                -magnitude
            }
        }
    };
    let a = (0..n).map(|_| draw()).collect();
    let b = (0..n).map(|_| draw()).collect();
    (a, b)
}

/// What one launch produced.
#[derive(Debug)]
pub struct Outcome<T> {
    pub result: T,
    pub report: LaunchReport,
}

/// The order in which blocks took the lock, and how long the list they built is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LockOrder {
    pub order: Vec<u32>,
    pub length: u32,
}

impl LockOrder {
    /// Every block appended itself exactly once: the list is a permutation of the blocks.
    pub fn is_complete(&self, blocks: u32) -> bool {
        let mut sorted = self.order.clone();
        sorted.sort_unstable();
        self.length == blocks && sorted.iter().copied().eq(0..blocks)
    }
}

/// One launch of [`Step::LockOrder`].
pub fn run_lock_order(
    device: &mut Device,
    variant: &Ch5Variant,
    shape: LaunchShape,
) -> Result<Outcome<LockOrder>> {
    device.ensure_can_run(variant)?;
    let blocks = one_dimensional_grid(shape)?;
    let mutex = device.zeros::<i32>(1, "mutex")?;
    // Slots no block wrote keep a value no block index has, so a gap shows.
    let order = device.upload(&vec![u32::MAX; blocks as usize], "order")?;
    let length = device.zeros::<u32>(1, "length")?;
    let report = device.launch(
        &variant.kernel,
        shape,
        &[Arg::from(&mutex), Arg::from(&order), Arg::from(&length)],
    )?;
    let length = device
        .download(&length)?
        .first()
        .copied()
        .unwrap_or_default();
    let order = device.download(&order)?;
    Ok(Outcome {
        result: LockOrder { order, length },
        report,
    })
}

/// The counter after one launch of a [`Step::Increment`] variant; it should equal the blocks.
pub fn run_increment(
    device: &mut Device,
    variant: &Ch5Variant,
    shape: LaunchShape,
) -> Result<Outcome<i32>> {
    device.ensure_can_run(variant)?;
    let mutex = device.zeros::<i32>(1, "mutex")?;
    let counter = device.zeros::<i32>(1, "x")?;
    let report = device.launch(
        &variant.kernel,
        shape,
        &[Arg::from(&mutex), Arg::from(&counter)],
    )?;
    let result = device
        .download(&counter)?
        .first()
        .copied()
        .unwrap_or_default();
    Ok(Outcome { result, report })
}

/// The dot product of `a` and `b` from one launch of a [`Step::PartialDot`] or
/// [`Step::DotMutex`] variant, finished on the host for the former.
pub fn run_dot(
    device: &mut Device,
    variant: &Ch5Variant,
    a: &[f32],
    b: &[f32],
    shape: LaunchShape,
) -> Result<Outcome<f32>> {
    device.ensure_can_run(variant)?;
    let n = check_dot_launch(a, b, shape)?;
    check_block_for(variant, shape)?;
    let a_buffer = device.upload(a, "a")?;
    let b_buffer = device.upload(b, "b")?;
    match variant.kind {
        Step::PartialDot | Step::WarpPartialDot { .. } => {
            let partial = device.zeros::<f32>(shape.grid.x as usize, "partial")?;
            let report = device.launch(
                &variant.kernel,
                shape,
                &[
                    Arg::from(&a_buffer),
                    Arg::from(&b_buffer),
                    Arg::U32(n),
                    Arg::from(&partial),
                ],
            )?;
            Ok(Outcome {
                result: host_sum_f32(&device.download(&partial)?),
                report,
            })
        }
        Step::AtomicDot => {
            let c = device.zeros::<f32>(1, "c")?;
            let report = device.launch(
                &variant.kernel,
                shape,
                &[
                    Arg::from(&a_buffer),
                    Arg::from(&b_buffer),
                    Arg::U32(n),
                    Arg::from(&c),
                ],
            )?;
            let result = device.download(&c)?.first().copied().unwrap_or_default();
            Ok(Outcome { result, report })
        }
        Step::DotMutex => {
            let c = device.zeros::<f32>(1, "c")?;
            let mutex = device.zeros::<i32>(1, "mutex")?;
            let report = device.launch(
                &variant.kernel,
                shape,
                &[
                    Arg::from(&a_buffer),
                    Arg::from(&b_buffer),
                    Arg::U32(n),
                    Arg::from(&c),
                    Arg::from(&mutex),
                ],
            )?;
            let result = device.download(&c)?.first().copied().unwrap_or_default();
            Ok(Outcome { result, report })
        }
        Step::OneLaunchDot => {
            let partial = device.zeros::<f32>(shape.grid.x as usize, "partial")?;
            let count = device.zeros::<u32>(1, "count")?;
            let c = device.zeros::<f32>(1, "c")?;
            let report = device.launch(
                &variant.kernel,
                shape,
                &[
                    Arg::from(&a_buffer),
                    Arg::from(&b_buffer),
                    Arg::U32(n),
                    Arg::from(&partial),
                    Arg::from(&count),
                    Arg::from(&c),
                ],
            )?;
            let left = device
                .download(&count)?
                .first()
                .copied()
                .unwrap_or_default();
            if left != 0 {
                return Err(HarnessError::Invalid(format!(
                    "{} left its block counter at {left}, not 0: the next launch would miscount",
                    variant.name
                )));
            }
            let result = device.download(&c)?.first().copied().unwrap_or_default();
            Ok(Outcome { result, report })
        }
        Step::LockOrder | Step::Increment => Err(HarnessError::Invalid(format!(
            "{} does not compute a dot product",
            variant.name
        ))),
    }
}

/// The dot kernels' contract: equal lengths that fit their `unsigned int`, a one-dimensional
/// launch, and a power-of-two block, which the tree halves down to one value.
pub fn check_dot_launch(a: &[f32], b: &[f32], shape: LaunchShape) -> Result<u32> {
    if a.len() != b.len() {
        return Err(HarnessError::Invalid(format!(
            "a has {} values and b has {}; a dot product needs equal lengths",
            a.len(),
            b.len()
        )));
    }
    one_dimensional_grid(shape)?;
    let threads = shape.block.x;
    if !threads.is_power_of_two() || threads > MAX_DOT_THREADS {
        return Err(HarnessError::Invalid(format!(
            "the dot kernels need a power-of-two block of at most {MAX_DOT_THREADS} threads, not {threads}"
        )));
    }
    u32::try_from(a.len()).map_err(|_| {
        HarnessError::Invalid(format!(
            "{} values is more than these kernels' 32-bit length allows",
            a.len()
        ))
    })
}

/// The warp-shuffle kernels' extra rule: whole warps.
pub fn check_block_for(variant: &Ch5Variant, shape: LaunchShape) -> Result<()> {
    let least = variant.kind.min_threads();
    if shape.block.x < least {
        return Err(HarnessError::Invalid(format!(
            "{} adds with warp shuffles and needs blocks of at least {least} threads, not {}",
            variant.name, shape.block.x
        )));
    }
    Ok(())
}

fn one_dimensional_grid(shape: LaunchShape) -> Result<u32> {
    if shape.grid.y * shape.grid.z != 1 || shape.block.y * shape.block.z != 1 {
        return Err(HarnessError::Invalid(format!(
            "these kernels use blockIdx.x and threadIdx.x only; {shape} is not one-dimensional"
        )));
    }
    Ok(shape.grid.x)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn references_on_known_vectors() {
        let a = [1.0f32, -2.0, 3.0, 0.5];
        let b = [4.0f32, 1.0, -1.0, 8.0];
        assert_eq!(dot_f64(&a, &b), 4.0 - 2.0 - 3.0 + 4.0);
        assert_eq!(abs_dot_f64(&a, &b), 4.0 + 2.0 + 3.0 + 4.0);
        assert_eq!(host_sum_f32(&[1.0, 2.0, 3.5]), 6.5);
        assert_eq!(host_sum_f32(&[]), 0.0);
    }

    #[test]
    fn depth_counts_every_stage() {
        // 1 product rounding + 4 loop adds + log2(256) = 8 tree levels + 16 blocks
        let shape = LaunchShape::linear(16, 256);
        assert_eq!(dot_depth(16 * 256 * 4, shape), 1 + 4 + 8 + 16);
        assert_eq!(dot_depth(0, LaunchShape::linear(1, 1)), 2);
        // float4s: two loop steps of 4 products and one from the tail, then the same stages
        let n = 16 * 256 * 8;
        let vectorized = Step::WarpPartialDot { vectorized: true };
        assert_eq!(step_depth(vectorized, n, shape), 1 + (4 * 2 + 1) + 8 + 16);
        assert_eq!(
            step_depth(Step::WarpPartialDot { vectorized: false }, n, shape),
            dot_depth(n, shape)
        );
        // atomics: the 16 block sums one after another, as on the host
        assert_eq!(
            step_depth(Step::AtomicDot, n, shape),
            1 + (4 * 2 + 1) + 8 + 16
        );
        // one launch: 16 block sums spread over 256 threads (one each), then a second tree
        assert_eq!(
            step_depth(Step::OneLaunchDot, n, shape),
            1 + (4 * 2 + 1) + 8 + 1 + 8
        );
    }

    #[test]
    fn lock_order_must_be_a_permutation() {
        let complete = LockOrder {
            order: vec![2, 0, 1],
            length: 3,
        };
        assert!(complete.is_complete(3));
        let repeated = LockOrder {
            order: vec![2, 2, 1],
            length: 3,
        };
        assert!(!repeated.is_complete(3));
        let short = LockOrder {
            order: vec![2, 0, u32::MAX],
            length: 2,
        };
        assert!(!short.is_complete(3));
    }

    #[test]
    fn dot_launches_are_checked_before_anything_runs() {
        let shape = LaunchShape::linear(4, 96);
        let error = check_dot_launch(&[1.0], &[1.0], shape).unwrap_err();
        assert!(error.to_string().contains("power-of-two block"), "{error}");
        let error = check_dot_launch(&[1.0], &[], LaunchShape::linear(1, 32)).unwrap_err();
        assert!(error.to_string().contains("equal lengths"), "{error}");
    }
}
