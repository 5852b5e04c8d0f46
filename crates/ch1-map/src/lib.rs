//! Chapter 1: threads, blocks, grids and element-wise maps.
//!
//! Every variant in [`VARIANTS`] is one kernel file in `kernels/ch1_map/`, in teaching order;
//! the walk-through, the tests and the book all read this list.

use std::fmt;
use std::ops::Range;

use harness::rand::Rng;
use harness::verify::bounds::F32_UNIT_ROUNDOFF;
use harness::verify::{Comparison, compare_by, compare_by_pieces};
use harness::{Arg, Device, Dim3, Expect, HarnessError, KernelSource, LaunchReport, LaunchShape};
use harness::{Result, Variant, kernel};

#[cfg(feature = "testing")]
pub mod testing;
#[cfg(feature = "walkthrough")]
pub mod walkthrough;

/// Longest array the kernels index: their indices are 32-bit `unsigned int`, and a grid-stride
/// step past the end must not wrap around.
pub const MAX_ELEMENTS: usize = 1 << 31;

/// Most threads a launch may have, for the same reason: `blockIdx.x * blockDim.x + threadIdx.x`
/// and the grid stride must fit in 32 bits.
pub const MAX_THREADS: u64 = 1 << 31;

/// How a variant is driven, since its kernel's parameters say what it computes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// `thread_ids(unsigned *block_of, unsigned *thread_of, unsigned n)` and its grid-stride
    /// twin in the same file: each element records the block and thread that reached it.
    ThreadIds,
    /// `kernel(const float *x, float a, float *y, unsigned n)`, one thread per element.
    ScalarMultiply,
    /// `elementwise_{add,sub,mul,div}(const float *a, const float *b, float *c, unsigned n)`,
    /// one thread per element.
    Elementwise,
    /// `kernel(const float *x, float *y, unsigned n)` with a grid-stride loop: any grid.
    Sigmoid,
    /// The same signature, one thread per four elements and no loop: the grid must cover
    /// ⌈n / 4⌉ threads.
    SigmoidPerThread,
    /// `kernel(const float *col, const float *row, float *out, unsigned rows, unsigned cols)`
    /// on a 2D grid of 2D blocks, one thread per element of `out`.
    BroadcastAdd2d,
    /// `kernel(float a, const float *x, float *y, unsigned n)`: `y = a · x + y`, one thread per
    /// element.
    Saxpy,
}

pub type Ch1Variant = Variant<Step>;

pub const VARIANTS: &[Ch1Variant] = &[
    Variant {
        name: "thread-ids",
        kernel: kernel!("ch1_map", "01_thread_ids", "thread_ids"),
        expect: Expect::Correct,
        summary: "which block and thread handles which element, one per element and grid-stride",
        kind: Step::ThreadIds,
    },
    Variant {
        name: "scalar-multiply",
        kernel: kernel!("ch1_map", "02_scalar_multiply", "scalar_multiply"),
        expect: Expect::Correct,
        summary: "y = a · x, one thread per element, threads past n do nothing",
        kind: Step::ScalarMultiply,
    },
    Variant {
        name: "elementwise",
        kernel: kernel!("ch1_map", "03_elementwise", "elementwise_add"),
        expect: Expect::Correct,
        summary: "c = a + b, a − b, a · b, a / b: four kernels, one per operator",
        kind: Step::Elementwise,
    },
    Variant {
        name: "sigmoid-grid-stride",
        kernel: kernel!("ch1_map", "04_sigmoid_grid_stride", "sigmoid_grid_stride"),
        expect: Expect::Correct,
        summary: "y = 1 / (1 + e^−x) with a grid-stride loop: any grid covers any length",
        kind: Step::Sigmoid,
    },
    Variant {
        name: "broadcast-add-2d",
        kernel: kernel!("ch1_map", "05_broadcast_add_2d", "broadcast_add_2d"),
        expect: Expect::Correct,
        summary: "out[r][c] = col[r] + row[c] on a 2D grid of 2D blocks",
        kind: Step::BroadcastAdd2d,
    },
    Variant {
        name: "scalar-multiply-no-guard",
        kernel: kernel!(
            "ch1_map",
            "06_scalar_multiply_no_guard",
            "scalar_multiply_no_guard"
        ),
        expect: Expect::OutOfBounds,
        summary: "no if (i < n): the last block's spare threads read and write past the end",
        kind: Step::ScalarMultiply,
    },
    Variant {
        name: "scalar-multiply-thread-index-only",
        kernel: kernel!(
            "ch1_map",
            "07_scalar_multiply_thread_index_only",
            "scalar_multiply_thread_index_only"
        ),
        expect: Expect::WrongResult,
        summary: "i = threadIdx.x: every block redoes the first blockDim.x elements",
        kind: Step::ScalarMultiply,
    },
    Variant {
        name: "sigmoid-fast-exp",
        kernel: kernel!("ch1_map", "08_sigmoid_fast_exp", "sigmoid_fast_exp"),
        expect: Expect::Correct,
        summary: "the grid-stride sigmoid with __expf, the hardware's approximate exponential",
        kind: Step::Sigmoid,
    },
    Variant {
        name: "sigmoid-float4",
        kernel: kernel!("ch1_map", "09_sigmoid_float4", "sigmoid_float4"),
        expect: Expect::Correct,
        summary: "the grid-stride sigmoid on float4: one 16-byte load and store per four elements",
        kind: Step::Sigmoid,
    },
    Variant {
        name: "sigmoid-float4-in-flight",
        kernel: kernel!(
            "ch1_map",
            "10_sigmoid_float4_in_flight",
            "sigmoid_float4_in_flight"
        ),
        expect: Expect::Correct,
        summary: "four float4 loads in flight per thread before any is used",
        kind: Step::Sigmoid,
    },
    Variant {
        name: "sigmoid-float4-per-thread",
        kernel: kernel!(
            "ch1_map",
            "11_sigmoid_float4_per_thread",
            "sigmoid_float4_per_thread"
        ),
        expect: Expect::Correct,
        summary: "one float4 per thread, no loop, on a grid that covers the array",
        kind: Step::SigmoidPerThread,
    },
    Variant {
        name: "saxpy",
        kernel: kernel!("ch1_map", "12_saxpy", "saxpy"),
        expect: Expect::Correct,
        summary: "y = a · x + y, one thread per element: one fma, rounded once",
        kind: Step::Saxpy,
    },
];

/// The sigmoid variants in the order of the chapter's climb, each the next step towards the
/// device copy's byte rate.
pub const SIGMOID_CLIMB: [&str; 5] = [
    "sigmoid-grid-stride",
    "sigmoid-fast-exp",
    "sigmoid-float4",
    "sigmoid-float4-in-flight",
    "sigmoid-float4-per-thread",
];

/// The variant named `name`; panics only on a typo in this crate, caught by its tests.
pub fn variant(name: &str) -> &'static Ch1Variant {
    match harness::find_variant(VARIANTS, name) {
        Ok(variant) => variant,
        Err(message) => panic!("{message}"),
    }
}

/// How the thread-ids kernels spread the grid's threads over the elements.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Coverage {
    /// `thread_ids`: thread `i` of the grid handles element `i`; the grid must cover `n`.
    OnePerElement,
    /// `thread_ids_grid_stride`: thread `t` handles `t`, `t + stride`, `t + 2·stride`, …
    GridStride,
}

impl Coverage {
    pub fn kernel(self) -> KernelSource {
        let one_per_element = variant("thread-ids").kernel;
        match self {
            Self::OnePerElement => one_per_element,
            Self::GridStride => KernelSource {
                entry: "thread_ids_grid_stride",
                ..one_per_element
            },
        }
    }
}

/// The thread that handled an element: `blockIdx.x` and `threadIdx.x`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Owner {
    pub block: u32,
    pub thread: u32,
}

impl Owner {
    /// What an element no thread reached reads: the kernels' arrays start filled with it.
    pub const NOBODY: Self = Self {
        block: u32::MAX,
        thread: u32::MAX,
    };
}

impl fmt::Display for Owner {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if *self == Self::NOBODY {
            f.write_str("nobody")
        } else {
            write!(f, "(block {}, thread {})", self.block, self.thread)
        }
    }
}

/// The CPU's answer to "who handles element `i`": the grid's thread `i mod (threads in the
/// grid)`. With one thread per element, that is thread `i` itself.
pub fn owner(i: usize, shape: LaunchShape) -> Owner {
    let threads_per_block = u64::from(shape.block.x);
    let global = i as u64 % (threads_per_block * u64::from(shape.grid.x));
    Owner {
        block: (global / threads_per_block) as u32,
        thread: (global % threads_per_block) as u32,
    }
}

/// [`owner`] of every element of an `n`-element array.
pub fn owners_cpu(n: usize, shape: LaunchShape) -> Vec<Owner> {
    (0..n).map(|i| owner(i, shape)).collect()
}

/// The four operators of the element-wise kernels, each its own `extern "C"` entry point in
/// `kernels/ch1_map/03_elementwise.cu`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BinaryOp {
    Add,
    Sub,
    Mul,
    Div,
}

impl BinaryOp {
    pub const ALL: [Self; 4] = [Self::Add, Self::Sub, Self::Mul, Self::Div];

    pub fn entry(self) -> &'static str {
        match self {
            Self::Add => "elementwise_add",
            Self::Sub => "elementwise_sub",
            Self::Mul => "elementwise_mul",
            Self::Div => "elementwise_div",
        }
    }

    pub fn symbol(self) -> &'static str {
        match self {
            Self::Add => "+",
            Self::Sub => "−",
            Self::Mul => "·",
            Self::Div => "/",
        }
    }

    pub fn kernel(self) -> KernelSource {
        KernelSource {
            entry: self.entry(),
            ..variant("elementwise").kernel
        }
    }

    /// The CPU reference: the same single IEEE operation in f32. The GPU's `add.f32`,
    /// `sub.f32`, `mul.f32` and `div.rn.f32` round to nearest, as the CPU does, so the two must
    /// agree bit for bit.
    pub fn apply(self, a: f32, b: f32) -> f32 {
        match self {
            Self::Add => a + b,
            Self::Sub => a - b,
            Self::Mul => a * b,
            Self::Div => a / b,
        }
    }
}

// ANCHOR: cpu_references
/// `y = a · x` on the CPU, in f32: one rounding per element, like the kernel's `mul.f32`.
pub fn scalar_multiply_cpu(x: &[f32], a: f32) -> Vec<f32> {
    x.iter().map(|&value| a * value).collect()
}

/// `y = a · x + y` on the CPU as the GPU computes it: NVRTC contracts `a * x[i] + y[i]` into
/// one `fma.rn.f32`, which rounds once, so the reference is `mul_add`, not `a * x + y` (which
/// rounds the product, then the sum).
pub fn saxpy_cpu(a: f32, x: &[f32], y: &[f32]) -> Vec<f32> {
    x.iter().zip(y).map(|(&x, &y)| a.mul_add(x, y)).collect()
}

/// `a ∘ b` element by element on the CPU, in f32.
pub fn elementwise_cpu(op: BinaryOp, a: &[f32], b: &[f32]) -> Vec<f32> {
    a.iter().zip(b).map(|(&a, &b)| op.apply(a, b)).collect()
}

/// The sigmoid in f64, far more accurate than any f32 result it is compared with.
pub fn sigmoid_f64(x: f32) -> f64 {
    1.0 / (1.0 + (-f64::from(x)).exp())
}

/// `out[r][c] = col[r] + row[c]`, row-major: NumPy's `col[:, None] + row[None, :]`.
pub fn broadcast_add_cpu(col: &[f32], row: &[f32]) -> Vec<f32> {
    col.iter()
        .flat_map(|&c| row.iter().map(move |&r| c + r))
        .collect()
}
// ANCHOR_END: cpu_references

/// An f32 compared the way IEEE results are: bit for bit, so `-0.0` differs from `0.0`, except
/// that every NaN equals every NaN (a GPU's NaN and a CPU's differ in sign and payload).
#[derive(Debug, Clone, Copy)]
pub struct Exact(pub f32);

impl PartialEq for Exact {
    fn eq(&self, other: &Self) -> bool {
        self.0.to_bits() == other.0.to_bits() || (self.0.is_nan() && other.0.is_nan())
    }
}

impl fmt::Display for Exact {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}", self.0)
    }
}

/// Wraps floats for [`harness::verify::compare_exact`].
pub fn exact(values: &[f32]) -> Vec<Exact> {
    values.iter().copied().map(Exact).collect()
}

// ANCHOR: sigmoid_bound
/// The relative error `sigmoid_grid_stride` may have, from documented bounds only:
///
/// - `expf` is within 2 ulp of the correctly rounded `e^-x` (CUDA C++ Programming Guide,
///   appendix *Mathematical Functions*, single-precision table); with that rounding's own
///   half ulp it is within 2.5 ulp of `e^-x`, and an ulp of a normal f32 `y` is at most
///   `2⁻²³·|y|`: `e = e^-x·(1 + δ₁)`, `|δ₁| ≤ 5u·(1 + u)`, with `u = 2⁻²⁴`.
/// - `1 + e` and `1 / …` round to nearest (`x + y` and `1/x` are 0 ulp, IEEE, with NVRTC's
///   default `-prec-div=true`): factors `(1 + δ₂)`, `(1 + δ₃)`, `|δ₂|, |δ₃| ≤ u`.
/// - `1 + e = (1 + e^-x)·(1 + η)` with `η = δ₁·e^-x / (1 + e^-x)`, so `|η| ≤ |δ₁|`.
///
/// So the result is `sigmoid(x)·(1 + δ₃) / ((1 + η)(1 + δ₂))`, within
/// `(1 + u) / ((1 − 5u(1 + u))(1 − u)) − 1 ≈ 7u ≈ 4.2·10⁻⁷` of it, relatively. `2⁻⁵⁰` more
/// covers the f64 reference's own rounding.
pub fn sigmoid_relative_bound() -> f64 {
    let u = F32_UNIT_ROUNDOFF;
    (1.0 + u) / ((1.0 - 5.0 * u * (1.0 + u)) * (1.0 - u)) - 1.0 + 2f64.powi(-50)
}

/// Below the smallest normal f32, `2⁻¹²⁶`, relative error means nothing: results there are
/// subnormal, and for `x < −88.7` `expf(−x)` overflows to infinity and the kernel returns 0,
/// where the true value is below `2⁻¹²⁷`. So every element may also be off by `2⁻¹²⁶`.
pub const SIGMOID_ABSOLUTE_FLOOR: f64 = 1.0 / (1u128 << 126) as f64;
// ANCHOR_END: sigmoid_bound

// ANCHOR: fast_exp_bound
/// The relative error `sigmoid_fast_exp` may have at input `x`. The CUDA Math API documents
/// `__expf(x)` as within `2 + ⌊|1.173·x|⌋` ulp of the correctly rounded `e^x`: the error grows
/// with `|x|`, because `__expf` multiplies `x` by `log₂e` in f32 and hands the rounded product
/// to the hardware's `2^x`. Everything else follows [`sigmoid_relative_bound`], with `k + ½`
/// ulp in place of its 2.5.
pub fn sigmoid_fast_exp_relative_bound(x: f32) -> f64 {
    let u = F32_UNIT_ROUNDOFF;
    let ulps = 2.0 + (1.173 * f64::from(x).abs()).floor() + 0.5;
    let exp_error = 2.0 * ulps * u * (1.0 + u);
    if exp_error >= 1.0 {
        // Past |x| ≈ 7·10⁶ the documented bound says nothing about the result's sign or size.
        return f64::INFINITY;
    }
    (1.0 + u) / ((1.0 - exp_error) * (1.0 - u)) - 1.0 + 2f64.powi(-50)
}
// ANCHOR_END: fast_exp_bound

/// Which exponential a sigmoid kernel calls, since that sets how far it may be from the truth.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exponential {
    /// `expf`: within 2 ulp everywhere ([`sigmoid_relative_bound`]).
    Expf,
    /// `__expf`: within `2 + ⌊|1.173·x|⌋` ulp ([`sigmoid_fast_exp_relative_bound`]).
    FastExpf,
}

impl Exponential {
    /// The exponential `variant`'s kernel calls.
    pub fn of(variant: &Ch1Variant) -> Self {
        if variant.kernel.source.contains("__expf(") {
            Self::FastExpf
        } else {
            Self::Expf
        }
    }

    /// The relative error allowed at input `x`.
    pub fn relative_bound(self, x: f32) -> f64 {
        match self {
            Self::Expf => sigmoid_relative_bound(),
            Self::FastExpf => sigmoid_fast_exp_relative_bound(x),
        }
    }
}

/// How far a sigmoid result may be from [`sigmoid_f64`] of its input.
pub fn sigmoid_bound(want: f64) -> f64 {
    sigmoid_relative_bound() * want.abs() + SIGMOID_ABSOLUTE_FLOOR
}

/// A sigmoid result checked element by element against the f64 reference under
/// [`sigmoid_bound`]; NaN must come out of NaN and only of NaN.
#[derive(Debug, Clone, PartialEq)]
pub struct SigmoidCheck {
    pub exponential: Exponential,
    pub len: usize,
    pub outside: usize,
    /// The first element outside the bound: index, input, result, reference.
    pub first_outside: Option<(usize, f32, f32, f64)>,
    /// The largest `|got − want| / |want|` among references of at least `2⁻¹²⁶`.
    pub worst_relative: f64,
}

impl SigmoidCheck {
    /// The check for a kernel that calls `expf`.
    pub fn new(x: &[f32], got: &[f32]) -> Self {
        Self::with(Exponential::Expf, x, got)
    }

    /// The check for a kernel that calls `exponential`: in chunks on every core, since the GPU
    /// walk-through checks 2^28 results at a time.
    pub fn with(exponential: Exponential, x: &[f32], got: &[f32]) -> Self {
        let len = x.len().min(got.len());
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
        let chunk = len.div_ceil(threads).max(1 << 16);
        let parts: Vec<Self> = std::thread::scope(|scope| {
            let handles: Vec<_> = (0..len)
                .step_by(chunk)
                .map(|start| {
                    let end = (start + chunk).min(len);
                    scope.spawn(move || {
                        Self::check_range(exponential, start, &x[start..end], &got[start..end])
                    })
                })
                .collect();
            handles
                .into_iter()
                .map(|handle| {
                    handle
                        .join()
                        .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
                })
                .collect()
        });
        let mut check = Self {
            exponential,
            len: x.len(),
            outside: x.len().abs_diff(got.len()),
            first_outside: None,
            worst_relative: 0.0,
        };
        for part in parts {
            check.outside += part.outside;
            check.first_outside = check.first_outside.or(part.first_outside);
            check.worst_relative = check.worst_relative.max(part.worst_relative);
        }
        check
    }

    /// The check of `x[first..]` and `got[first..]`, as one piece of [`Self::with`].
    fn check_range(exponential: Exponential, first: usize, x: &[f32], got: &[f32]) -> Self {
        let mut check = Self {
            exponential,
            len: x.len(),
            outside: 0,
            first_outside: None,
            worst_relative: 0.0,
        };
        for (offset, (&input, &result)) in x.iter().zip(got).enumerate() {
            let want = sigmoid_f64(input);
            let error = (f64::from(result) - want).abs();
            let relative = exponential.relative_bound(input);
            let bound = if relative.is_finite() {
                relative * want.abs() + SIGMOID_ABSOLUTE_FLOOR
            } else {
                f64::INFINITY
            };
            let within = if want.is_nan() {
                result.is_nan()
            } else {
                error <= bound
            };
            if !within {
                check.outside += 1;
                check
                    .first_outside
                    .get_or_insert((first + offset, input, result, want));
            } else if want.abs() >= SIGMOID_ABSOLUTE_FLOOR {
                check.worst_relative = check.worst_relative.max(error / want.abs());
            }
        }
        check
    }

    pub fn is_within(&self) -> bool {
        self.outside == 0
    }
}

impl fmt::Display for SigmoidCheck {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let bound = match self.exponential {
            Exponential::Expf => format!("{:.1e}·|y|", sigmoid_relative_bound()),
            Exponential::FastExpf => "(⌊1.173·|x|⌋ + 3.5)·2⁻²³·|y|".to_string(),
        };
        if self.is_within() {
            return write!(
                f,
                "✓ all {} values within {bound} + 2⁻¹²⁶ of the f64 reference (worst {:.1e}·|y|, {:.2} u)",
                self.len,
                self.worst_relative,
                self.worst_relative / F32_UNIT_ROUNDOFF
            );
        }
        write!(
            f,
            "✗ {} of {} values outside {bound} + 2⁻¹²⁶ of the f64 reference",
            self.outside, self.len
        )?;
        if let Some((index, input, got, want)) = self.first_outside {
            write!(f, ": [{index}] x = {input:?}, got {got:?}, want {want:.9e}")?;
        }
        Ok(())
    }
}

/// What the generated floats look like.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Data {
    /// uniform in [-1, 1)
    Unit,
    /// uniform in [-128, 128): the sigmoid's whole range, past where `expf` overflows
    Wide,
    /// any f32 bit pattern: NaN, ±∞, ±0, subnormals and every exponent
    AnyBits,
    /// uniform in [-1, 1), with one value in 16 an arbitrary bit pattern
    Mixed,
}

impl fmt::Display for Data {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Unit => "uniform in [−1, 1)",
            Self::Wide => "uniform in [−128, 128)",
            Self::AnyBits => "arbitrary bit patterns",
            Self::Mixed => {
                "uniform in [−1, 1), one in 16 an arbitrary bit pattern (NaN, ±∞, ±0, subnormals…)"
            }
        })
    }
}

/// Floats built from a seed, so millions cost nothing to shrink and any failure repeats from
/// its printed seed; drawn on every core in pieces (see [`harness::cli::seeded_values`]), since
/// a GPU's inputs are hundreds of millions of them.
pub fn floats(len: usize, data: Data, seed: u64) -> Vec<f32> {
    harness::cli::seeded_values(len, seed, |rng| match data {
        Data::Unit => rng.random_range(-1.0f32..1.0),
        Data::Wide => rng.random_range(-128.0f32..128.0),
        Data::AnyBits => f32::from_bits(rng.random()),
        Data::Mixed => {
            if rng.random_range(0..16) == 0 {
                f32::from_bits(rng.random())
            } else {
                rng.random_range(-1.0f32..1.0)
            }
        }
    })
}

/// `got` against `want` bit for bit, as [`Exact`] compares, on every core.
pub fn same_bits(got: &[f32], want: &[f32]) -> Comparison<Exact> {
    compare_by(got, want, |_, g, w| Exact(g) == Exact(w)).map(Exact)
}

/// [`same_bits`] against an element-wise reference computed piece by piece on every core:
/// `reference(range)` is the reference's elements `range` of `want_len`, e.g.
/// `scalar_multiply_cpu(&x[range], a)`, the same function on a piece of the input.
pub fn same_bits_as(
    got: &[f32],
    want_len: usize,
    reference: impl Fn(Range<usize>) -> Vec<f32> + Sync,
) -> Comparison<Exact> {
    compare_by_pieces(got, want_len, reference, |_, g, w| Exact(g) == Exact(w)).map(Exact)
}

/// What one launch produced.
#[derive(Debug)]
pub struct Outcome<T> {
    pub result: T,
    pub report: LaunchReport,
}

/// `ceil(n / threads_per_block)` blocks, the grid a one-thread-per-element kernel needs (one
/// block for `n = 0`, since a grid cannot be empty).
pub fn covering_shape(n: usize, threads_per_block: u32) -> LaunchShape {
    let blocks = n.div_ceil(threads_per_block.max(1) as usize).max(1);
    LaunchShape::linear(u32::try_from(blocks).unwrap_or(u32::MAX), threads_per_block)
}

/// The 2D grid that covers a `rows × cols` matrix with blocks of `block = (x, y)` threads.
pub fn broadcast_shape(rows: usize, cols: usize, block: (u32, u32)) -> LaunchShape {
    let blocks = |len: usize, side: u32| {
        u32::try_from(len.div_ceil(side.max(1) as usize).max(1)).unwrap_or(u32::MAX)
    };
    LaunchShape {
        grid: Dim3::xy(blocks(cols, block.0), blocks(rows, block.1)),
        block: Dim3::xy(block.0, block.1),
        dynamic_shared_bytes: 0,
    }
}

/// Who handled each element of an `n`-element array under `coverage` and `shape`; elements
/// no thread reached read [`Owner::NOBODY`].
pub fn run_thread_ids(
    device: &mut Device,
    coverage: Coverage,
    n: usize,
    shape: LaunchShape,
) -> Result<Outcome<Vec<Owner>>> {
    let kernel = coverage.kernel();
    let length = check_1d(&kernel, n, shape, coverage == Coverage::OnePerElement)?;
    let block_of = device.upload(&vec![u32::MAX; n], "block_of")?;
    let thread_of = device.upload(&vec![u32::MAX; n], "thread_of")?;
    let report = device.launch(
        &kernel,
        shape,
        &[
            Arg::from(&block_of),
            Arg::from(&thread_of),
            Arg::U32(length),
        ],
    )?;
    let blocks = device.download(&block_of)?;
    let threads = device.download(&thread_of)?;
    Ok(Outcome {
        result: blocks
            .into_iter()
            .zip(threads)
            .map(|(block, thread)| Owner { block, thread })
            .collect(),
        report,
    })
}

/// `y = a · x` from one launch of a [`Step::ScalarMultiply`] variant; y starts as NaN, so an
/// element no thread wrote stands out. `spare` more floats are allocated past the end of both
/// arrays (x's hold 1) and returned after y's `n`, so a kernel that runs past `n` writes where
/// it can be seen instead of outside any allocation.
pub fn run_scalar_multiply(
    device: &mut Device,
    variant: &Ch1Variant,
    x: &[f32],
    a: f32,
    shape: LaunchShape,
    spare: usize,
) -> Result<Outcome<Vec<f32>>> {
    expect_step(variant, Step::ScalarMultiply)?;
    device.ensure_can_run(variant)?;
    let length = check_1d(&variant.kernel, x.len(), shape, true)?;
    let mut padded = x.to_vec();
    padded.resize(x.len() + spare, 1.0);
    let x_buffer = device.upload(&padded, "x")?;
    let y = device.upload(&vec![f32::NAN; x.len() + spare], "y")?;
    let report = device.launch(
        &variant.kernel,
        shape,
        &[
            Arg::from(&x_buffer),
            Arg::F32(a),
            Arg::from(&y),
            Arg::U32(length),
        ],
    )?;
    Ok(Outcome {
        result: device.download(&y)?,
        report,
    })
}

/// `y = a · x + y` from one launch of a [`Step::Saxpy`] variant: the new `y`.
pub fn run_saxpy(
    device: &mut Device,
    variant: &Ch1Variant,
    a: f32,
    x: &[f32],
    y: &[f32],
    shape: LaunchShape,
) -> Result<Outcome<Vec<f32>>> {
    expect_step(variant, Step::Saxpy)?;
    device.ensure_can_run(variant)?;
    if x.len() != y.len() {
        return Err(HarnessError::Invalid(format!(
            "{} needs x and y of one length, not {} and {}",
            variant.kernel.entry,
            x.len(),
            y.len()
        )));
    }
    let length = check_1d(&variant.kernel, x.len(), shape, true)?;
    let x_buffer = device.upload(x, "x")?;
    let y_buffer = device.upload(y, "y")?;
    let report = device.launch(
        &variant.kernel,
        shape,
        &[
            Arg::F32(a),
            Arg::from(&x_buffer),
            Arg::from(&y_buffer),
            Arg::U32(length),
        ],
    )?;
    Ok(Outcome {
        result: device.download(&y_buffer)?,
        report,
    })
}

/// `c = a ∘ b` from one launch of the element-wise kernel for `op`.
pub fn run_elementwise(
    device: &mut Device,
    op: BinaryOp,
    a: &[f32],
    b: &[f32],
    shape: LaunchShape,
) -> Result<Outcome<Vec<f32>>> {
    let kernel = op.kernel();
    if a.len() != b.len() {
        return Err(HarnessError::Invalid(format!(
            "{} needs two arrays of one length, not {} and {}",
            op.entry(),
            a.len(),
            b.len()
        )));
    }
    let length = check_1d(&kernel, a.len(), shape, true)?;
    let a_buffer = device.upload(a, "a")?;
    let b_buffer = device.upload(b, "b")?;
    let c = device.zeros::<f32>(a.len(), "c")?;
    let report = device.launch(
        &kernel,
        shape,
        &[
            Arg::from(&a_buffer),
            Arg::from(&b_buffer),
            Arg::from(&c),
            Arg::U32(length),
        ],
    )?;
    Ok(Outcome {
        result: device.download(&c)?,
        report,
    })
}

/// `y = sigmoid(x)` from one launch of a [`Step::Sigmoid`] variant, with any grid, or of a
/// [`Step::SigmoidPerThread`] one, whose grid must cover ⌈n / 4⌉ threads.
pub fn run_sigmoid(
    device: &mut Device,
    variant: &Ch1Variant,
    x: &[f32],
    shape: LaunchShape,
) -> Result<Outcome<Vec<f32>>> {
    let per_thread = variant.kind == Step::SigmoidPerThread;
    if !per_thread {
        expect_step(variant, Step::Sigmoid)?;
    }
    device.ensure_can_run(variant)?;
    let length = check_1d(&variant.kernel, x.len(), shape, false)?;
    let quads = x.len().div_ceil(4);
    if per_thread && shape.total_threads() < quads as u64 {
        let needed = covering_shape(quads, shape.block.x).grid.x;
        return Err(refuse(
            &variant.kernel,
            shape,
            format!(
                "its {} threads cover only {} of the {} elements; one thread per four elements needs ceil(ceil({} / 4) / {}) = {needed} blocks",
                shape.total_threads(),
                (4 * shape.total_threads()).min(x.len() as u64),
                x.len(),
                x.len(),
                shape.block.x
            ),
        ));
    }
    let x_buffer = device.upload(x, "x")?;
    let y = device.zeros::<f32>(x.len(), "y")?;
    let report = device.launch(
        &variant.kernel,
        shape,
        &[Arg::from(&x_buffer), Arg::from(&y), Arg::U32(length)],
    )?;
    Ok(Outcome {
        result: device.download(&y)?,
        report,
    })
}

/// The `col.len() × row.len()` matrix `col[r] + row[c]`, row-major, from one launch of a
/// [`Step::BroadcastAdd2d`] variant with blocks of `block = (x, y)` threads.
pub fn run_broadcast_add_2d(
    device: &mut Device,
    variant: &Ch1Variant,
    col: &[f32],
    row: &[f32],
    block: (u32, u32),
) -> Result<Outcome<Vec<f32>>> {
    expect_step(variant, Step::BroadcastAdd2d)?;
    device.ensure_can_run(variant)?;
    let (rows, cols) = (col.len(), row.len());
    let elements = rows.checked_mul(cols).filter(|&e| e <= MAX_ELEMENTS);
    let Some(elements) = elements else {
        return Err(HarnessError::Invalid(format!(
            "a {rows} × {cols} matrix is more than these kernels' 32-bit indices allow (at most 2^31 elements)"
        )));
    };
    let shape = broadcast_shape(rows, cols, block);
    check_threads(&variant.kernel, shape)?;
    let col_buffer = device.upload(col, "col")?;
    let row_buffer = device.upload(row, "row")?;
    let out = device.zeros::<f32>(elements, "out")?;
    let report = device.launch(
        &variant.kernel,
        shape,
        &[
            Arg::from(&col_buffer),
            Arg::from(&row_buffer),
            Arg::from(&out),
            Arg::U32(rows as u32),
            Arg::U32(cols as u32),
        ],
    )?;
    Ok(Outcome {
        result: device.download(&out)?,
        report,
    })
}

/// Refuses what a 1D kernel would get wrong, in one sentence; returns `n` as the kernel's
/// `unsigned int`.
pub fn check_1d(
    kernel: &KernelSource,
    n: usize,
    shape: LaunchShape,
    one_per_element: bool,
) -> Result<u32> {
    if n > MAX_ELEMENTS {
        return Err(HarnessError::Invalid(format!(
            "{n} elements is more than these kernels' 32-bit indices allow (at most 2^31)"
        )));
    }
    if shape.block.y != 1 || shape.block.z != 1 || shape.grid.y != 1 || shape.grid.z != 1 {
        return Err(refuse(
            kernel,
            shape,
            "this kernel indexes with the x axis only, so grid and block must be 1D".into(),
        ));
    }
    check_threads(kernel, shape)?;
    if one_per_element && shape.total_threads() < n as u64 {
        let needed = covering_shape(n, shape.block.x).grid.x;
        return Err(refuse(
            kernel,
            shape,
            format!(
                "its {} threads cover only {} of the {n} elements; one thread per element needs ceil({n} / {}) = {needed} blocks",
                shape.total_threads(),
                shape.total_threads(),
                shape.block.x
            ),
        ));
    }
    Ok(n as u32)
}

fn check_threads(kernel: &KernelSource, shape: LaunchShape) -> Result<()> {
    if shape.total_threads() > MAX_THREADS {
        return Err(refuse(
            kernel,
            shape,
            format!(
                "{} threads is more than the 2^31 these kernels' 32-bit indices allow",
                shape.total_threads()
            ),
        ));
    }
    Ok(())
}

fn expect_step(variant: &Ch1Variant, step: Step) -> Result<()> {
    if variant.kind == step {
        Ok(())
    } else {
        Err(HarnessError::Invalid(format!(
            "{} is a {:?} variant, not {step:?}; see --list",
            variant.name, variant.kind
        )))
    }
}

fn refuse(kernel: &KernelSource, shape: LaunchShape, reason: String) -> HarnessError {
    HarnessError::BadLaunch {
        entry: kernel.entry.to_string(),
        grid: shape.grid.to_string(),
        block: shape.block.to_string(),
        reason,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn owners_follow_the_index_formula() {
        let shape = LaunchShape::linear(3, 4);
        let at = |block, thread| Owner { block, thread };
        assert_eq!(owner(0, shape), at(0, 0));
        assert_eq!(owner(5, shape), at(1, 1));
        assert_eq!(owner(11, shape), at(2, 3));
        // a grid of 12 threads striding over more elements comes back to thread 0
        assert_eq!(owner(12, shape), at(0, 0));
        assert_eq!(owner(18, shape), at(1, 2));
        assert_eq!(Owner::NOBODY.to_string(), "nobody");
    }

    #[test]
    fn references_compute_what_the_kernels_do() {
        assert_eq!(scalar_multiply_cpu(&[1.0, -2.0], 3.0), vec![3.0, -6.0]);
        assert_eq!(
            elementwise_cpu(BinaryOp::Div, &[1.0, 0.0], &[4.0, 0.0])[0],
            0.25
        );
        assert!(elementwise_cpu(BinaryOp::Div, &[0.0], &[0.0])[0].is_nan());
        assert_eq!(
            broadcast_add_cpu(&[0.0, 10.0], &[1.0, 2.0, 3.0]),
            vec![1.0, 2.0, 3.0, 11.0, 12.0, 13.0]
        );
        assert_eq!(saxpy_cpu(2.0, &[1.5], &[-1.0]), vec![2.0]);
        // 1 + 2⁻²³ squared is 1 + 2⁻²² + 2⁻⁴⁶: one rounding keeps the 2⁻⁴⁶ that two lose
        let x = 1.0 + f32::EPSILON;
        let fused = saxpy_cpu(x, &[x], &[-1.0 - 2.0 * f32::EPSILON])[0];
        assert_eq!(fused, 2f32.powi(-46));
        assert_eq!(x * x + (-1.0 - 2.0 * f32::EPSILON), 0.0);
        assert_eq!(sigmoid_f64(0.0), 0.5);
        assert_eq!(sigmoid_f64(f32::INFINITY), 1.0);
        assert_eq!(sigmoid_f64(f32::NEG_INFINITY), 0.0);
    }

    #[test]
    fn exact_comparison_is_bitwise_but_nan_is_nan() {
        assert_eq!(Exact(f32::NAN), Exact(-f32::NAN));
        assert_ne!(Exact(0.0), Exact(-0.0));
        assert_ne!(Exact(1.0), Exact(1.0 + f32::EPSILON));
    }

    #[test]
    fn sigmoid_bound_is_seven_unit_roundoffs() {
        let bound = sigmoid_relative_bound() / F32_UNIT_ROUNDOFF;
        assert!((7.0..7.001).contains(&bound), "{bound} u");
        // a result one part in a million off, ten times a rounding error, is caught
        let x = [0.75f32];
        let off = (sigmoid_f64(0.75) * (1.0 + 1e-6)) as f32;
        assert!(!SigmoidCheck::new(&x, &[off]).is_within());
        let close = sigmoid_f64(0.75) as f32;
        assert!(SigmoidCheck::new(&x, &[close]).is_within());
        // NaN only from NaN
        assert!(SigmoidCheck::new(&[f32::NAN], &[f32::NAN]).is_within());
        assert!(!SigmoidCheck::new(&[1.0], &[f32::NAN]).is_within());
        // below 2^-126 an absolute allowance takes over
        assert!(SigmoidCheck::new(&[-100.0], &[0.0]).is_within());
    }

    #[test]
    fn the_fast_exp_bound_grows_with_x_from_the_expf_one() {
        let at = |x: f32| sigmoid_fast_exp_relative_bound(x) / F32_UNIT_ROUNDOFF;
        // 2 + 0 ulp of __expf at x = 0, against expf's 2: the same bound
        assert!((at(0.0) - 7.0).abs() < 0.001, "{} u", at(0.0));
        // 2 + ⌊1.173 · 100⌋ = 119 ulp at |x| = 100: (2 · 119.5 + 2) u
        assert!((at(-100.0) - 241.0).abs() < 0.01, "{} u", at(-100.0));
        assert_eq!(at(100.0), at(-100.0));
        assert!(sigmoid_fast_exp_relative_bound(1e30).is_infinite());
        let x = [50.0f32];
        let want = sigmoid_f64(50.0);
        let check = |got: f64| SigmoidCheck::with(Exponential::FastExpf, &x, &[got as f32]);
        assert!(check(want * (1.0 + 100.0 * F32_UNIT_ROUNDOFF)).is_within());
        assert!(!check(want * (1.0 + 1e-4)).is_within());
        assert!(
            !SigmoidCheck::new(&x, &[(want * (1.0 + 100.0 * F32_UNIT_ROUNDOFF)) as f32])
                .is_within()
        );
    }

    #[test]
    fn covering_shapes_round_up() {
        assert_eq!(covering_shape(10, 4), LaunchShape::linear(3, 4));
        assert_eq!(covering_shape(0, 256), LaunchShape::linear(1, 256));
        assert_eq!(covering_shape(1024, 256), LaunchShape::linear(4, 256));
        let shape = broadcast_shape(3, 37, (16, 2));
        assert_eq!((shape.grid.x, shape.grid.y), (3, 2));
    }
}
