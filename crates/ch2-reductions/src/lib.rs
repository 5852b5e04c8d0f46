//! Chapter 2: shared memory, barriers and 1D/2D reductions.
//!
//! Every variant in [`VARIANTS`] is one kernel file in `kernels/ch2_reductions/`, in teaching
//! order; the walk-through, the tests and the book all read this list.

use std::fmt;

use harness::verify::bounds;
use harness::{Arg, Buffer, Device, Dim3, Expect, HarnessError, LaunchReport, LaunchShape, Result};
use harness::{Variant, kernel};

#[cfg(feature = "walkthrough")]
pub mod image;
#[cfg(feature = "testing")]
pub mod testing;
#[cfg(feature = "walkthrough")]
pub mod walkthrough;

/// The largest block, and the size of every kernel's shared array.
pub const MAX_THREADS: u32 = 1024;

/// Side of the blobs kernels' shared tile, and of their blocks.
pub const TILE: u32 = 16;

/// Longest input the kernels index: their indices are 32-bit `unsigned int`, and a grid-stride
/// step past the end must not wrap around.
pub const MAX_ELEMENTS: usize = 1 << 31;

/// How a variant is driven, since its kernel's parameters say what it computes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// `kernel(const float *x, unsigned n, float *block_sums)`: one partial sum per block,
    /// added up on the host. `tree`: the block is reduced by halving, so its size must be a
    /// power of two.
    HostFinished { tree: bool },
    /// The same signature, launched twice: over `x` with the chosen grid, then over the block
    /// sums with one block, so the total never leaves the device until it is read.
    DeviceFinished,
    /// `kernel(const float *a, unsigned rows, unsigned cols, float *block_sums)` over a
    /// row-major matrix, with a 2D grid of 2D blocks; block sums added up on the host.
    Reduce2d,
    /// `kernel(float *image, unsigned width, unsigned height)` with 16×16 blocks.
    Blobs,
    /// The climb: `kernel(const float *x, unsigned n, float *block_sums)` whose block sums come
    /// from warp shuffles (so a block is whole warps), launched twice like
    /// [`Step::DeviceFinished`]; `loads` says how each thread reads `x`.
    Shuffled { loads: Loads },
    /// `kernel(x, n, block_sums, unsigned *blocks_done, float *total)`: one launch, whose last
    /// block to finish adds up the block sums; it leaves `blocks_done` at 0 for the next launch.
    OneLaunch,
    /// `kernel(x, n, float *total)`: one launch, each block adds its sum into `total` with
    /// `atomicAdd`, in the order the blocks finish; `total` is zeroed before every launch.
    AtomicFinish,
}

/// How each thread of a climb kernel reads its share of the input.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Loads {
    /// `x[j]` and `x[j + blockDim]` per grid-stride step, as in `two-loads-tree`.
    TwoFloats,
    /// One `float4` (16 bytes) per grid-stride step.
    Float4,
    /// Four independent `float4` loads in flight per step, on a grid sized to the GPU.
    Float4InFlight,
}

impl Step {
    /// Whether the block's thread count must be a power of two (the tree halves it).
    pub fn needs_power_of_two_block(self) -> bool {
        matches!(
            self,
            Step::HostFinished { tree: true } | Step::DeviceFinished | Step::Reduce2d
        )
    }

    /// Whether the block must be whole warps: the block sum is formed by warp shuffles.
    pub fn needs_whole_warps(self) -> bool {
        matches!(
            self,
            Step::Shuffled { .. } | Step::OneLaunch | Step::AtomicFinish
        )
    }

    /// Whether the kernel reads `x` as 16-byte `float4`s.
    pub fn reads_float4(self) -> bool {
        matches!(
            self,
            Step::Shuffled {
                loads: Loads::Float4 | Loads::Float4InFlight
            } | Step::OneLaunch
                | Step::AtomicFinish
        )
    }

    /// Whether the walk-through launches it on a grid sized to the GPU: as many blocks as the
    /// GPU keeps resident, rather than the chapter's fixed grid.
    pub fn sized_to_the_gpu(self) -> bool {
        matches!(
            self,
            Step::Shuffled {
                loads: Loads::Float4InFlight
            } | Step::OneLaunch
                | Step::AtomicFinish
        )
    }

    /// Whether the total is computed on the device and read from `total`.
    pub fn finishes_on_the_device(self) -> bool {
        matches!(
            self,
            Step::DeviceFinished | Step::Shuffled { .. } | Step::OneLaunch | Step::AtomicFinish
        )
    }

    /// Whether it is one of the 1D reductions [`run_reduce_1d`] drives.
    pub fn is_1d(self) -> bool {
        !matches!(self, Step::Reduce2d | Step::Blobs)
    }
}

/// The most threads a grid of the `float4` kernels may have: four strides of them must fit in
/// their 32-bit indices.
pub const MAX_FLOAT4_THREADS: u64 = 1 << 28;

pub type Ch2Variant = Variant<Step>;

pub const VARIANTS: &[Ch2Variant] = &[
    Variant {
        name: "naive-block-sum",
        kernel: kernel!("ch2_reductions", "01_naive_block_sum", "naive_block_sum"),
        expect: Expect::Correct,
        summary: "grid-stride partial sums per thread, thread 0 adds up the block, the host adds the blocks",
        kind: Step::HostFinished { tree: false },
    },
    Variant {
        name: "tree-reduction",
        kernel: kernel!("ch2_reductions", "02_tree_reduction", "tree_reduction"),
        expect: Expect::Correct,
        summary: "s[tid] += s[tid + i], halving i, with a barrier after every step",
        kind: Step::HostFinished { tree: true },
    },
    Variant {
        name: "two-loads-tree",
        kernel: kernel!("ch2_reductions", "03_two_loads_tree", "two_loads_tree"),
        expect: Expect::Correct,
        summary: "two loads per thread before the tree; a second launch reduces the block sums on the device",
        kind: Step::DeviceFinished,
    },
    Variant {
        name: "reduction-2d",
        kernel: kernel!("ch2_reductions", "04_reduction_2d", "reduction_2d"),
        expect: Expect::Correct,
        summary: "a 2D grid of 2D blocks over a matrix, one linearised shared array per block",
        kind: Step::Reduce2d,
    },
    Variant {
        name: "blobs",
        kernel: kernel!("ch2_reductions", "05_blobs", "blobs"),
        expect: Expect::Correct,
        summary: "a 16×16 shared tile written, a barrier, then read mirrored: the blobs image",
        kind: Step::Blobs,
    },
    Variant {
        name: "tree-no-sync",
        kernel: kernel!("ch2_reductions", "06_tree_no_sync", "tree_no_sync"),
        expect: Expect::Race,
        summary: "the tree without its barrier: a step reads sums the previous step has not written",
        kind: Step::HostFinished { tree: true },
    },
    Variant {
        name: "tree-sync-in-if",
        kernel: kernel!("ch2_reductions", "07_tree_sync_in_if", "tree_sync_in_if"),
        expect: Expect::BarrierDivergence,
        summary: "__syncthreads() inside if (tid < i): a barrier only part of the block reaches",
        kind: Step::HostFinished { tree: true },
    },
    Variant {
        name: "blobs-no-sync",
        kernel: kernel!("ch2_reductions", "08_blobs_no_sync", "blobs_no_sync"),
        expect: Expect::Race,
        summary: "blobs without the barrier: reads tile slots before their threads wrote them",
        kind: Step::Blobs,
    },
    Variant {
        name: "reduction-2d-swapped-strides",
        kernel: kernel!(
            "ch2_reductions",
            "09_reduction_2d_swapped_strides",
            "reduction_2d_swapped_strides"
        ),
        expect: Expect::WrongResult,
        summary: "2D reduction with the grid strides swapped: right only when the grid is square",
        kind: Step::Reduce2d,
    },
    Variant {
        name: "warp-shuffle",
        kernel: kernel!("ch2_reductions", "10_warp_shuffle", "warp_shuffle"),
        expect: Expect::Correct,
        summary: "two-loads-tree with its tree in registers: warps add with __shfl_down_sync",
        kind: Step::Shuffled {
            loads: Loads::TwoFloats,
        },
    },
    Variant {
        name: "float4-loads",
        kernel: kernel!("ch2_reductions", "11_float4_loads", "float4_loads"),
        expect: Expect::Correct,
        summary: "one 16-byte float4 load per thread and step instead of two 4-byte loads",
        kind: Step::Shuffled {
            loads: Loads::Float4,
        },
    },
    Variant {
        name: "gpu-sized-grid",
        kernel: kernel!("ch2_reductions", "12_gpu_sized_grid", "gpu_sized_grid"),
        expect: Expect::Correct,
        summary: "one wave of resident blocks, each thread with four float4 loads in flight",
        kind: Step::Shuffled {
            loads: Loads::Float4InFlight,
        },
    },
    Variant {
        name: "one-launch",
        kernel: kernel!("ch2_reductions", "13_one_launch", "one_launch"),
        expect: Expect::Correct,
        summary: "the GPU-sized reduction in one launch: the last block to finish adds the block sums",
        kind: Step::OneLaunch,
    },
    Variant {
        name: "atomic-finish",
        kernel: kernel!("ch2_reductions", "14_atomic_finish", "atomic_finish"),
        expect: Expect::Correct,
        summary: "one launch, each block's sum added to the total with atomicAdd: any order, any rounding",
        kind: Step::AtomicFinish,
    },
];

/// The variant named `name`; panics only on a typo in this crate, caught by its tests.
pub fn variant(name: &str) -> &'static Ch2Variant {
    match harness::find_variant(VARIANTS, name) {
        Ok(variant) => variant,
        Err(message) => panic!("{message}"),
    }
}

// ANCHOR: cpu_references
/// The CPU reference: every float widened to f64 and added in order. For the inputs here
/// (at most 2³¹ values) its own error is below 2⁻²² of Σ|x|, far inside any f32 bound.
pub fn sum_f64(x: &[f32]) -> f64 {
    let mut sum = 0.0;
    for &value in x {
        sum += f64::from(value);
    }
    sum
}

/// Σ|xᵢ|, which the error bound scales with.
pub fn abs_sum_f64(x: &[f32]) -> f64 {
    x.iter().map(|&value| f64::from(value).abs()).sum()
}

/// The host's share of naive-block-sum, tree-reduction and reduction-2d: the block sums
/// added in order, in f32 as a learner's host code would.
pub fn finish_on_host(block_sums: &[f32]) -> f32 {
    block_sums.iter().fold(0.0f32, |sum, &value| sum + value)
}
// ANCHOR_END: cpu_references

/// The sum of a `rows × cols` row-major matrix, row by row, in f64.
pub fn sum_2d_f64(a: &[f32], rows: usize, cols: usize) -> f64 {
    a.chunks(cols.max(1)).take(rows).map(sum_f64).sum()
}

/// A result checked against the f64 reference under the summation error bound.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SumCheck {
    pub got: f32,
    pub want: f64,
    /// The longest chain of f32 additions any input value went through.
    pub depth: u64,
    pub abs_sum: f64,
    /// `γ_{depth+1} · Σ|x|`.
    pub bound: f64,
}

impl SumCheck {
    pub fn new(got: f32, want: f64, depth: u64, abs_sum: f64) -> Self {
        Self {
            got,
            want,
            depth,
            abs_sum,
            bound: bounds::sum_f32(depth, abs_sum),
        }
    }

    pub fn error(&self) -> f64 {
        (f64::from(self.got) - self.want).abs()
    }

    pub fn is_within(&self) -> bool {
        self.error() <= self.bound
    }
}

impl fmt::Display for SumCheck {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let relative = if self.want == 0.0 {
            String::new()
        } else {
            format!(" ({:.1e} of the sum)", self.error() / self.want.abs())
        };
        write!(
            f,
            "{} result {} · reference {:.4} · error {:.2e}{relative} · bound {:.2e} (γ_{} · Σ|x|)",
            if self.is_within() { "✓" } else { "✗" },
            self.got,
            self.want,
            self.error(),
            self.bound,
            self.depth + 1,
        )
    }
}

/// The longest chain of f32 additions behind a 1D result of `step` over `n` values launched
/// with `shape`: the grid-stride loop, then the block's own stage, then the finishing stage.
pub fn depth_1d(step: Step, n: usize, shape: LaunchShape) -> u64 {
    let blocks = u64::from(shape.grid.x);
    let threads = u64::from(shape.block.x);
    let n = n as u64;
    match step {
        // thread 0 adds the block's values one by one; the host adds the blocks one by one
        Step::HostFinished { tree: false } => n.div_ceil(blocks * threads) + threads + blocks,
        Step::HostFinished { tree: true } => {
            n.div_ceil(blocks * threads) + bounds::tree_depth(threads) + blocks
        }
        Step::DeviceFinished
        | Step::Shuffled {
            loads: Loads::TwoFloats,
        } => {
            let first = 2 * n.div_ceil(2 * blocks * threads) + bounds::tree_depth(threads);
            let second = 2 * blocks.div_ceil(2 * threads) + bounds::tree_depth(threads);
            first + second
        }
        // Each float4 is added up in two levels, then into the thread's sum, one after another;
        // one more for the n % 4 floats at the end; then the block's shuffles.
        Step::Shuffled { .. } => {
            let first = (n / 4).div_ceil(blocks * threads) + 3 + bounds::tree_depth(threads);
            let second = (blocks / 4).div_ceil(threads) + 3 + bounds::tree_depth(threads);
            first + second
        }
        Step::OneLaunch => {
            let first = (n / 4).div_ceil(blocks * threads) + 3 + bounds::tree_depth(threads);
            let last_block = blocks.div_ceil(threads) + bounds::tree_depth(threads);
            first + last_block
        }
        // The block sums reach `total` one atomicAdd after another, in any order: a chain of
        // `blocks` additions, whichever block comes last.
        Step::AtomicFinish => {
            let first = (n / 4).div_ceil(blocks * threads) + 3 + bounds::tree_depth(threads);
            first + blocks
        }
        Step::Reduce2d | Step::Blobs => 0,
    }
}

/// The same for a `rows × cols` 2D reduction: each thread's rows × columns, the tree over the
/// block's threads, the host over the blocks.
pub fn depth_2d(rows: usize, cols: usize, shape: LaunchShape) -> u64 {
    let per_thread = (rows as u64).div_ceil(u64::from(shape.block.y * shape.grid.y))
        * (cols as u64).div_ceil(u64::from(shape.block.x * shape.grid.x));
    per_thread + bounds::tree_depth(shape.block.product()) + shape.grid.product()
}

/// The blobs' `2π / 64`, as NVRTC folds `2.0f * 3.14159265f / 64.0f` into the PTX
/// (`3.14159265f` is the f32 nearest π).
pub const BLOB_STEP: f32 = 2.0 * std::f32::consts::PI / 64.0;

/// The amplitude at pixel (x, y), from the same f32 angle the kernel computes, in f64.
pub fn blob_amplitude(x: u32, y: u32) -> f64 {
    let angle = |v: u32| f64::from(v as f32 * BLOB_STEP);
    (angle(x).sin() + 1.0) * (angle(y).sin() + 1.0) * 0.25
}

/// The blobs image the kernel must draw: each pixel takes the value of its mirror in the
/// 16×16 tile it belongs to, whether or not the mirror lies inside the image.
pub fn blobs_reference(width: u32, height: u32) -> Vec<f64> {
    let mut image = Vec::with_capacity(width as usize * height as usize);
    for y in 0..height {
        for x in 0..width {
            let mirror = |v: u32| (v / TILE) * TILE + (TILE - 1 - v % TILE);
            image.push(blob_amplitude(mirror(x), mirror(y)));
        }
    }
    image
}

/// How far a blobs pixel may be from [`blob_amplitude`]: `sinf` is within 2 ulp (≤ 2⁻²² for
/// values in [-1, 1]); `+ 1` rounds by ≤ 2⁻²⁴; each factor then carries ≤ 1.25·2⁻²², the
/// product of two factors ≤ 2 adds 2·(2·1.25·2⁻²²) + its own rounding 2⁻²², and `× 0.25` is
/// exact: 1.5·2⁻²² in all, rounded up to 2⁻²⁰.
pub const BLOB_PIXEL_BOUND: f64 = 1.0 / 1_048_576.0;

/// Whether a blobs pixel is within [`BLOB_PIXEL_BOUND`] of the reference (NaN never is).
pub fn pixel_matches(got: f32, want: f64) -> bool {
    (f64::from(got) - want).abs() <= BLOB_PIXEL_BOUND
}

/// What one variant produced.
#[derive(Debug)]
pub struct Outcome<T> {
    pub result: T,
    pub report: LaunchReport,
}

/// The buffers a 1D reduction writes besides its input.
#[derive(Debug)]
pub struct ReduceBuffers {
    /// One partial sum per block of the first launch.
    pub block_sums: Buffer<f32>,
    /// The total, for the variants that finish on the device.
    pub total: Buffer<f32>,
    /// How many blocks of a [`Step::OneLaunch`] kernel have published their sum; 0 between
    /// launches.
    pub blocks_done: Buffer<u32>,
}

impl ReduceBuffers {
    /// Zeroed buffers for grids of up to `blocks` blocks.
    pub fn new(device: &mut Device, blocks: usize) -> Result<Self> {
        Ok(Self {
            block_sums: device.zeros(blocks, "block_sums")?,
            total: device.zeros(1, "total")?,
            blocks_done: device.zeros(1, "blocks_done")?,
        })
    }

    /// The result of the launches just made: the device's total, or the block sums added on
    /// the host.
    pub fn result(&self, device: &mut Device, step: Step, shape: LaunchShape) -> Result<f32> {
        if step.finishes_on_the_device() {
            Ok(first(&device.download(&self.total)?))
        } else {
            let sums = device.download(&self.block_sums)?;
            Ok(finish_on_host(
                &sums[..(shape.grid.x as usize).min(sums.len())],
            ))
        }
    }
}

/// The sum of `x` from one of the 1D variants ([`Step::is_1d`]).
pub fn run_reduce_1d(
    device: &mut Device,
    variant: &Ch2Variant,
    x: &[f32],
    shape: LaunchShape,
) -> Result<Outcome<f32>> {
    device.ensure_can_run(variant)?;
    check_1d(variant, x.len(), shape)?;
    let input = device.upload(x, "x")?;
    let mut buffers = ReduceBuffers::new(device, shape.grid.x as usize)?;
    let report = launch_1d(device, variant, &input, x.len(), shape, &mut buffers)?;
    let result = buffers.result(device, variant.kind, shape)?;
    Ok(Outcome { result, report })
}

/// Launches a 1D variant on buffers already on the device, waiting for it; for the variants
/// that finish on the device with a second launch, both launches.
pub fn launch_1d(
    device: &mut Device,
    variant: &Ch2Variant,
    input: &Buffer<f32>,
    n: usize,
    shape: LaunchShape,
    buffers: &mut ReduceBuffers,
) -> Result<LaunchReport> {
    enqueue_1d(device, variant, input, n, shape, buffers, true).map(|findings| LaunchReport {
        findings,
        ..LaunchReport::default()
    })
}

/// Runs (`wait`) or only enqueues (for timing) the launches of a 1D variant; returns the
/// emulator's findings of all of them.
pub fn enqueue_1d(
    device: &mut Device,
    variant: &Ch2Variant,
    input: &Buffer<f32>,
    n: usize,
    shape: LaunchShape,
    buffers: &mut ReduceBuffers,
    wait: bool,
) -> Result<Vec<harness::Finding>> {
    let n = length_u32(n)?;
    let launch = |device: &mut Device, shape: LaunchShape, args: &[Arg<'_>]| {
        if wait {
            device
                .launch(&variant.kernel, shape, args)
                .map(|report| report.findings)
        } else {
            device
                .launch_async(&variant.kernel, shape, args)
                .map(|()| Vec::new())
        }
    };
    if variant.kind == Step::AtomicFinish {
        device.clear(&mut buffers.total)?;
        return launch(
            device,
            shape,
            &[Arg::from(input), Arg::U32(n), Arg::from(&buffers.total)],
        );
    }
    if variant.kind == Step::OneLaunch {
        return launch(
            device,
            shape,
            &[
                Arg::from(input),
                Arg::U32(n),
                Arg::from(&buffers.block_sums),
                Arg::from(&buffers.blocks_done),
                Arg::from(&buffers.total),
            ],
        );
    }
    let mut findings = launch(
        device,
        shape,
        &[
            Arg::from(input),
            Arg::U32(n),
            Arg::from(&buffers.block_sums),
        ],
    )?;
    if variant.kind.finishes_on_the_device() {
        findings.extend(launch(
            device,
            finishing_shape(shape),
            &[
                Arg::from(&buffers.block_sums),
                Arg::U32(shape.grid.x),
                Arg::from(&buffers.total),
            ],
        )?);
    }
    Ok(findings)
}

/// The second launch of the variants that finish on the device with one: one block of the
/// same size.
pub fn finishing_shape(shape: LaunchShape) -> LaunchShape {
    LaunchShape::linear(1, shape.block.x)
}

/// The sum of a `rows × cols` row-major matrix from a [`Step::Reduce2d`] variant.
pub fn run_reduce_2d(
    device: &mut Device,
    variant: &Ch2Variant,
    a: &[f32],
    rows: usize,
    cols: usize,
    shape: LaunchShape,
) -> Result<Outcome<f32>> {
    device.ensure_can_run(variant)?;
    check_2d(variant, a.len(), rows, cols, shape)?;
    let input = device.upload(a, "a")?;
    let block_sums = device.zeros::<f32>(shape.grid.product() as usize, "block_sums")?;
    let report = device.launch(
        &variant.kernel,
        shape,
        &[
            Arg::from(&input),
            Arg::U32(length_u32(rows)?),
            Arg::U32(length_u32(cols)?),
            Arg::from(&block_sums),
        ],
    )?;
    Ok(Outcome {
        result: finish_on_host(&device.download(&block_sums)?),
        report,
    })
}

/// The `width × height` image from a [`Step::Blobs`] variant, row-major.
pub fn run_blobs(
    device: &mut Device,
    variant: &Ch2Variant,
    width: u32,
    height: u32,
) -> Result<Outcome<Vec<f32>>> {
    device.ensure_can_run(variant)?;
    expect_step(variant, |step| step == Step::Blobs, "an image kernel")?;
    let pixels = u64::from(width) * u64::from(height);
    if width == 0 || height == 0 || pixels > MAX_ELEMENTS as u64 {
        return Err(HarnessError::Invalid(format!(
            "a {width} × {height} image is outside what the blobs kernels draw (1 to 2^31 pixels)"
        )));
    }
    let image = device.zeros::<f32>(pixels as usize, "image")?;
    let report = device.launch(
        &variant.kernel,
        blobs_shape(width, height),
        &[Arg::from(&image), Arg::U32(width), Arg::U32(height)],
    )?;
    Ok(Outcome {
        result: device.download(&image)?,
        report,
    })
}

/// 16×16 blocks covering the image.
pub fn blobs_shape(width: u32, height: u32) -> LaunchShape {
    LaunchShape {
        grid: Dim3::xy(width.div_ceil(TILE), height.div_ceil(TILE)),
        block: Dim3::xy(TILE, TILE),
        dynamic_shared_bytes: 0,
    }
}

/// A 2D launch shape: `block` threads per block and `grid` blocks, each as (x, y).
pub fn shape_2d(grid: (u32, u32), block: (u32, u32)) -> LaunchShape {
    LaunchShape {
        grid: Dim3::xy(grid.0, grid.1),
        block: Dim3::xy(block.0, block.1),
        dynamic_shared_bytes: 0,
    }
}

/// Refuses inputs and shapes a 1D variant's kernel would get wrong, in one sentence.
pub fn check_1d(variant: &Ch2Variant, n: usize, shape: LaunchShape) -> Result<()> {
    expect_step(variant, Step::is_1d, "a 1D reduction")?;
    check_length(n)?;
    if shape.block.y != 1 || shape.block.z != 1 || shape.grid.y != 1 || shape.grid.z != 1 {
        return Err(refuse(
            variant,
            shape,
            "this kernel indexes with the x axis only, so grid and block must be 1D",
        ));
    }
    if variant.kind.reads_float4() && shape.total_threads() > MAX_FLOAT4_THREADS {
        return Err(refuse(
            variant,
            shape,
            "four grid strides must fit in the kernel's 32-bit indices, so the grid may have at most 2^28 threads",
        ));
    }
    check_block(variant, shape)
}

/// Refuses inputs and shapes the 2D kernels would get wrong, in one sentence.
pub fn check_2d(
    variant: &Ch2Variant,
    len: usize,
    rows: usize,
    cols: usize,
    shape: LaunchShape,
) -> Result<()> {
    expect_step(variant, |step| step == Step::Reduce2d, "a 2D reduction")?;
    if rows.checked_mul(cols) != Some(len) {
        return Err(HarnessError::Invalid(format!(
            "{len} values do not form a {rows} × {cols} matrix"
        )));
    }
    check_length(len)?;
    if shape.block.z != 1 || shape.grid.z != 1 {
        return Err(refuse(
            variant,
            shape,
            "this kernel indexes with the x and y axes only, so grid and block must have z = 1",
        ));
    }
    check_block(variant, shape)
}

fn check_block(variant: &Ch2Variant, shape: LaunchShape) -> Result<()> {
    let threads = shape.block.product();
    if variant.kind.needs_whole_warps() && !threads.is_multiple_of(32) {
        return Err(refuse(
            variant,
            shape,
            &format!(
                "the block's sum is added up by warp shuffles over whole warps, so its {threads} threads must be a multiple of 32"
            ),
        ));
    }
    if variant.kind.needs_power_of_two_block() && threads > 0 && !threads.is_power_of_two() {
        return Err(refuse(
            variant,
            shape,
            &format!(
                "the tree halves the block's {threads} threads at every step, so their number must be a power of two"
            ),
        ));
    }
    Ok(())
}

fn expect_step(variant: &Ch2Variant, fits: impl Fn(Step) -> bool, what: &str) -> Result<()> {
    if fits(variant.kind) {
        Ok(())
    } else {
        Err(HarnessError::Invalid(format!(
            "{} is not {what}; see --list",
            variant.name
        )))
    }
}

fn refuse(variant: &Ch2Variant, shape: LaunchShape, reason: &str) -> HarnessError {
    HarnessError::BadLaunch {
        entry: variant.kernel.entry.to_string(),
        grid: shape.grid.to_string(),
        block: shape.block.to_string(),
        reason: reason.to_string(),
    }
}

fn check_length(len: usize) -> Result<()> {
    if len > MAX_ELEMENTS {
        return Err(HarnessError::Invalid(format!(
            "{len} values is more than these kernels' 32-bit indices allow (at most 2^31)"
        )));
    }
    Ok(())
}

/// The kernels take lengths as `unsigned int`.
fn length_u32(len: usize) -> Result<u32> {
    u32::try_from(len).map_err(|_| {
        HarnessError::Invalid(format!(
            "{len} values is more than these kernels' 32-bit length allows"
        ))
    })
}

fn first(values: &[f32]) -> f32 {
    values.first().copied().unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blob_step_is_the_constant_nvrtc_folds() {
        // `mul.f32 %f1, %f27, 0f3DC90FDB` in kernels/ptx/ch2_reductions/05_blobs.ptx
        assert_eq!(BLOB_STEP.to_bits(), 0x3DC9_0FDB);
    }

    #[test]
    fn blobs_reference_mirrors_within_each_tile() {
        let image = blobs_reference(20, 3);
        assert_eq!(image[0], blob_amplitude(15, 15));
        assert_eq!(image[15], blob_amplitude(0, 15));
        assert_eq!(image[16], blob_amplitude(31, 15));
        assert_eq!(image[2 * 20 + 1], blob_amplitude(14, 13));
    }

    #[test]
    fn depths_count_every_stage() {
        let shape = LaunchShape::linear(4, 256);
        assert_eq!(
            depth_1d(Step::HostFinished { tree: false }, 10_000, shape),
            10 + 256 + 4
        );
        assert_eq!(
            depth_1d(Step::HostFinished { tree: true }, 10_000, shape),
            10 + 8 + 4
        );
        assert_eq!(
            depth_1d(Step::DeviceFinished, 10_000, shape),
            10 + 8 + 2 + 8
        );
        assert_eq!(
            depth_2d(300, 500, shape_2d((4, 2), (32, 8))),
            19 * 4 + 8 + 8
        );
    }

    #[test]
    fn references_agree_on_known_values() {
        assert_eq!(sum_f64(&[1.0, 2.0, -0.5]), 2.5);
        assert_eq!(abs_sum_f64(&[1.0, 2.0, -0.5]), 3.5);
        assert_eq!(finish_on_host(&[1.0, 2.0, -0.5]), 2.5);
        assert_eq!(sum_2d_f64(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0], 2, 3), 21.0);
        let check = SumCheck::new(2.5, 2.5, 3, 3.5);
        assert!(check.is_within());
        assert!(!SumCheck::new(2.6, 2.5, 3, 3.5).is_within());
    }
}
