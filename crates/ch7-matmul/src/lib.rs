//! Chapter 7: matrix multiplication: tiling, shared-memory reuse, boundaries, and streams.
//!
//! Every variant in [`VARIANTS`] is one kernel file in `kernels/ch7_matmul/`, in teaching
//! order; the walk-through, the tests and the book all read this list. Matrices are row-major
//! f32: `C (M×N) = A (M×K) · B (K×N)`.

use std::fmt;

use harness::verify::{Comparison, bounds, compare_within};
use harness::{
    Arg, Buffer, Device, Dim3, Expect, HarnessError, HostBuffer, LaunchReport, LaunchShape, Result,
    Stream, Variant, kernel,
};

#[cfg(feature = "walkthrough")]
pub mod error_map;
#[cfg(feature = "testing")]
pub mod testing;
pub mod transpose;
#[cfg(feature = "walkthrough")]
pub mod walkthrough;

/// The tile side of kernels 03–06: their blocks are exactly `TILE × TILE` threads.
pub const TILE: u32 = 16;

/// How a variant is driven, since its kernel's parameters say what it computes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// `kernel(A, B, C, M, N, K)`, any 2D block.
    Naive,
    /// `kernel(A, B, C, M, N, K)`, blocks of exactly `TILE × TILE`.
    Tiled,
    /// The same, each `TILE × TILE` block computing a `2·TILE × 2·TILE` tile of C: a 2 × 2
    /// block of C per thread, on a grid of ⌈N / 32⌉ × ⌈M / 32⌉ ([`tiled_2x2_shape`]).
    Tiled2x2,
    /// `kernel(A_rows, B, C_rows, rows, N, K)` once per chunk of rows, each chunk on a stream
    /// between its copy in and its copy out.
    Pipeline,
    /// `kernel(A, B, C, M, N, K)`, a rung of the climb to cuBLAS: 1D blocks of fixed size,
    /// each computing one whole tile of C, on sizes that are multiples of the tile.
    Climb(Tiling),
}

/// The fixed shape of a climb kernel: each block of `threads` computes a `tile_m × tile_n`
/// tile of C, stepping `tile_k` along K at a time, with no bounds checks inside.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tiling {
    pub tile_m: u32,
    pub tile_n: u32,
    pub tile_k: u32,
    pub threads: u32,
}

impl Tiling {
    /// The sizes the kernel allows: M and N multiples of its tile, K of its step along K.
    pub fn allows(self, dims: Dims) -> bool {
        dims.m.is_multiple_of(self.tile_m)
            && dims.n.is_multiple_of(self.tile_n)
            && dims.k.is_multiple_of(self.tile_k)
    }

    /// The one launch the kernel runs with: a block per tile of C.
    pub fn shape(self, dims: Dims) -> LaunchShape {
        LaunchShape {
            grid: Dim3::xy(dims.n / self.tile_n, dims.m / self.tile_m),
            block: Dim3::x(self.threads),
            dynamic_shared_bytes: 0,
        }
    }
}

pub type Ch7Variant = Variant<Step>;

pub const VARIANTS: &[Ch7Variant] = &[
    Variant {
        name: "naive",
        kernel: kernel!("ch7_matmul", "01_naive", "matmul_naive"),
        expect: Expect::Correct,
        summary: "one thread per element of C: a row of A times a column of B",
        kind: Step::Naive,
    },
    Variant {
        name: "naive-write-outside-guard",
        kernel: kernel!(
            "ch7_matmul",
            "02_naive_write_outside_guard",
            "matmul_naive_write_outside_guard"
        ),
        expect: Expect::OutOfBounds,
        summary: "the store to C moved below the bounds check: threads past the edge write anyway",
        kind: Step::Naive,
    },
    Variant {
        name: "tiled-no-bounds",
        kernel: kernel!("ch7_matmul", "03_tiled_no_bounds", "matmul_tiled_no_bounds"),
        expect: Expect::OutOfBounds,
        summary: "shared-memory tiles with no bounds checks: right only when TILE divides M, N and K",
        kind: Step::Tiled,
    },
    Variant {
        name: "tiled-missing-second-sync",
        kernel: kernel!(
            "ch7_matmul",
            "04_tiled_missing_second_sync",
            "matmul_tiled_missing_second_sync"
        ),
        expect: Expect::Race,
        summary: "no barrier after a tile is used: the next tile overwrites it while others read",
        kind: Step::Tiled,
    },
    Variant {
        name: "tiled",
        kernel: kernel!("ch7_matmul", "05_tiled", "matmul_tiled"),
        expect: Expect::Correct,
        summary: "TILE × TILE tiles in shared memory, zero-padded at the edges: any M, N, K",
        kind: Step::Tiled,
    },
    Variant {
        name: "pipeline",
        kernel: kernel!("ch7_matmul", "06_pipeline_chunk", "matmul_pipeline_chunk"),
        expect: Expect::Correct,
        summary: "rows of A and C in chunks, each on a stream: copy in, multiply, copy out",
        kind: Step::Pipeline,
    },
    Variant {
        name: "block-tiling-1d",
        kernel: kernel!("ch7_matmul", "07_block_tiling_1d", "matmul_block_tiling_1d"),
        expect: Expect::Correct,
        summary: "each thread computes 8 elements of a column of C: one read of B serves 8 multiply-adds",
        kind: Step::Climb(Tiling {
            tile_m: 64,
            tile_n: 64,
            tile_k: 8,
            threads: 512,
        }),
    },
    Variant {
        name: "block-tiling-2d",
        kernel: kernel!("ch7_matmul", "08_block_tiling_2d", "matmul_block_tiling_2d"),
        expect: Expect::Correct,
        summary: "each thread computes an 8 × 8 block of C from 8 + 8 values held in registers",
        kind: Step::Climb(Tiling {
            tile_m: 128,
            tile_n: 128,
            tile_k: 8,
            threads: 256,
        }),
    },
    Variant {
        name: "vectorized",
        kernel: kernel!("ch7_matmul", "09_vectorized", "matmul_vectorized"),
        expect: Expect::Correct,
        summary: "float4 loads from global and shared memory, A stored transposed in shared memory",
        kind: Step::Climb(Tiling {
            tile_m: 128,
            tile_n: 128,
            tile_k: 8,
            threads: 256,
        }),
    },
    Variant {
        name: "warp-tiling",
        kernel: kernel!("ch7_matmul", "10_warp_tiling", "matmul_warp_tiling"),
        expect: Expect::Correct,
        summary: "each warp owns a 64 × 32 piece of the tile, each thread four 4 × 4 blocks of it; indices computed once",
        kind: Step::Climb(Tiling {
            tile_m: 128,
            tile_n: 128,
            tile_k: 8,
            threads: 256,
        }),
    },
    Variant {
        name: "double-buffered",
        kernel: kernel!("ch7_matmul", "11_double_buffered", "matmul_double_buffered"),
        expect: Expect::Correct,
        summary: "the next tiles load while this one is multiplied, into a second pair of buffers: one barrier per step",
        kind: Step::Climb(Tiling {
            tile_m: 128,
            tile_n: 128,
            tile_k: 8,
            threads: 256,
        }),
    },
    Variant {
        name: "tuned-tiles",
        kernel: kernel!("ch7_matmul", "12_tuned_tiles", "matmul_tuned_tiles"),
        expect: Expect::Correct,
        summary: "the tile shape a sweep picked: 4 warps of 64 × 64, each thread an 8 × 16 block of C",
        kind: Step::Climb(Tiling {
            tile_m: 128,
            tile_n: 128,
            tile_k: 8,
            threads: 128,
        }),
    },
    Variant {
        name: "tiled-2x2",
        kernel: kernel!("ch7_matmul", "13_tiled_2x2", "matmul_tiled_2x2"),
        expect: Expect::Correct,
        summary: "tiled with a 2 × 2 block of C per thread: each shared value feeds two multiply-adds",
        kind: Step::Tiled2x2,
    },
];

/// The variant named `name`; panics only on a typo in this crate, caught by its tests.
pub fn variant(name: &str) -> &'static Ch7Variant {
    match harness::find_variant(VARIANTS, name) {
        Ok(variant) => variant,
        Err(message) => panic!("{message}"),
    }
}

/// `C (M×N) = A (M×K) · B (K×N)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Dims {
    pub m: u32,
    pub n: u32,
    pub k: u32,
}

impl Dims {
    pub const fn new(m: u32, n: u32, k: u32) -> Self {
        Self { m, n, k }
    }

    pub const fn square(side: u32) -> Self {
        Self::new(side, side, side)
    }

    pub fn a_len(self) -> usize {
        self.m as usize * self.k as usize
    }

    pub fn b_len(self) -> usize {
        self.k as usize * self.n as usize
    }

    pub fn c_len(self) -> usize {
        self.m as usize * self.n as usize
    }

    /// Multiply-adds count two floating-point operations each.
    pub fn flops(self) -> f64 {
        2.0 * f64::from(self.m) * f64::from(self.n) * f64::from(self.k)
    }

    /// Every dimension at least 1, and every index the kernels compute (`row * K + k` and
    /// the like, in 32-bit `unsigned int`) below 2³².
    pub fn validate(self) -> Result<()> {
        if self.m == 0 || self.n == 0 || self.k == 0 {
            return Err(HarnessError::Invalid(format!(
                "{self}: every dimension must be at least 1"
            )));
        }
        let largest = self.a_len().max(self.b_len()).max(self.c_len()) as u64;
        // Tiles may index up to one tile past an edge.
        let padded = largest + u64::from(TILE) * (u64::from(self.m.max(self.n).max(self.k)) + 1);
        if padded > u64::from(u32::MAX) {
            return Err(HarnessError::Invalid(format!(
                "{self}: the kernels index with 32-bit unsigned ints, and these matrices are too large for that"
            )));
        }
        Ok(())
    }
}

impl fmt::Display for Dims {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "A {}×{} · B {}×{} = C {}×{}",
            self.m, self.k, self.k, self.n, self.m, self.n
        )
    }
}

// ANCHOR: cpu_reference
/// The CPU reference in f64, and beside each element `Σₖ |A[i][k]|·|B[k][j]|`, which its
/// error bound scales with. Products of two f32 are exact in f64, and the f64 sum's own error
/// (below K·2⁻⁵³ of that scale) is far inside any f32 bound.
pub fn matmul_f64(a: &[f32], b: &[f32], dims: Dims) -> (Vec<f64>, Vec<f64>) {
    let (m, n, k) = (dims.m as usize, dims.n as usize, dims.k as usize);
    let mut c = vec![0.0; m * n];
    let mut scale = vec![0.0; m * n];
    for i in 0..m {
        for p in 0..k {
            let a_ip = f64::from(a[i * k + p]);
            for j in 0..n {
                let b_pj = f64::from(b[p * n + j]);
                c[i * n + j] += a_ip * b_pj;
                scale[i * n + j] += (a_ip * b_pj).abs();
            }
        }
    }
    (c, scale)
}

/// The error bound of one element of C computed in f32 in any order (Higham, *Accuracy and
/// Stability of Numerical Algorithms*, §3.1): `|C − Ĉ| ≤ γ_K · Σₖ |A||B|`. K products each
/// rounded once, then added along a chain at most K − 1 deep, whichever order a kernel
/// chooses: the naive loop, the tiled loop with its zero padding, or a fused multiply-add.
pub fn element_bound(k: u32, scale: f64) -> f64 {
    bounds::sum_f32(u64::from(k.saturating_sub(1)), scale)
}
// ANCHOR_END: cpu_reference

/// A result of C checked element by element against the f64 reference under its bound.
#[derive(Debug, Clone)]
pub struct MatmulCheck {
    pub comparison: Comparison<f64>,
    /// The largest `|C − Ĉ| / bound` over the elements; at most 1 when everything passes.
    pub worst_fraction_of_bound: f64,
    /// Per element of C: outside its bound (or NaN).
    pub wrong: Vec<bool>,
    pub k: u32,
}

impl MatmulCheck {
    pub fn new(got: &[f32], want: &[f64], scale: &[f64], k: u32) -> Self {
        let got: Vec<f64> = got.iter().map(|&v| f64::from(v)).collect();
        let bound = |i: usize| element_bound(k, scale[i]);
        let comparison = compare_within(&got, want, bound);
        let worst_fraction_of_bound = got
            .iter()
            .zip(want)
            .enumerate()
            .map(|(i, (g, w))| {
                let error = (g - w).abs();
                if error == 0.0 { 0.0 } else { error / bound(i) }
            })
            .fold(0.0, f64::max);
        let wrong = got
            .iter()
            .zip(want)
            .enumerate()
            .map(|(i, (g, w))| {
                // written so that a NaN counts as wrong
                let within = (g - w).abs() <= bound(i);
                !within
            })
            .collect();
        Self {
            comparison,
            worst_fraction_of_bound,
            wrong,
            k,
        }
    }

    pub fn is_match(&self) -> bool {
        self.comparison.is_match()
    }
}

impl fmt::Display for MatmulCheck {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_match() {
            write!(
                f,
                "✓ all {} values within γ_{}·Σ|A||B| of the f64 CPU result (worst error {:.2} of its bound)",
                self.comparison.len, self.k, self.worst_fraction_of_bound
            )
        } else {
            write!(f, "{}", self.comparison)
        }
    }
}

/// The grid that covers C with `block`-shaped blocks.
pub fn covering_shape(dims: Dims, block: (u32, u32)) -> LaunchShape {
    LaunchShape {
        grid: Dim3::xy(
            dims.n.div_ceil(block.0.max(1)),
            dims.m.div_ceil(block.1.max(1)),
        ),
        block: Dim3::xy(block.0, block.1),
        dynamic_shared_bytes: 0,
    }
}

/// The launch of the tiled kernels: `TILE × TILE` blocks covering C.
pub fn tiled_shape(dims: Dims) -> LaunchShape {
    covering_shape(dims, (TILE, TILE))
}

/// The launch of `tiled-2x2`: `TILE × TILE` blocks, each covering a `2·TILE × 2·TILE` tile of C.
pub fn tiled_2x2_shape(dims: Dims) -> LaunchShape {
    LaunchShape {
        block: Dim3::xy(TILE, TILE),
        ..covering_shape(dims, (2 * TILE, 2 * TILE))
    }
}

/// Spare floats after each matrix that hold every stray access of a launch of `shape` over
/// `dims`: a grid overhangs C by less than a block in each direction, and a tile reads A and B
/// less than a tile past their edges.
pub fn guard_for(dims: Dims, shape: LaunchShape) -> usize {
    let widest_block = shape.block.x.max(shape.block.y).max(TILE) as usize;
    let largest_dim = dims.m.max(dims.n).max(dims.k) as usize;
    (widest_block + 1) * (largest_dim + 1)
}

/// What one run produced.
#[derive(Debug)]
pub struct Outcome {
    /// C, `M × N`.
    pub result: Vec<f32>,
    /// How many of the guard floats after C were written (they start as NaN).
    pub guard_written: usize,
    pub report: LaunchReport,
}

/// C from one launch of a [`Step::Naive`] or [`Step::Tiled`] variant with `shape` (tiled
/// variants need `TILE × TILE` blocks). `guard` spare floats follow each of A, B and C, as
/// room for the broken variants' stray accesses on a GPU, where nothing stops them; C's are
/// NaN, so [`Outcome::guard_written`] counts the stray writes. With `guard` 0 the emulator's
/// memcheck reports every access past an end.
pub fn run_matmul(
    device: &mut Device,
    variant: &Ch7Variant,
    a: &[f32],
    b: &[f32],
    dims: Dims,
    shape: LaunchShape,
    guard: usize,
) -> Result<Outcome> {
    device.ensure_can_run(variant)?;
    dims.validate()?;
    check_lengths(a, b, dims)?;
    let tiled = matches!(variant.kind, Step::Tiled | Step::Tiled2x2);
    if tiled && shape.block != Dim3::xy(TILE, TILE) {
        return Err(HarnessError::Invalid(format!(
            "{} needs blocks of exactly {} threads, not {}",
            variant.name,
            Dim3::xy(TILE, TILE),
            shape.block
        )));
    }
    if let Step::Climb(tiling) = variant.kind {
        check_climb(variant, tiling, dims, shape)?;
    }
    let a_buffer = device.upload(&with_guard(a, guard, 0.0), "A")?;
    let b_buffer = device.upload(&with_guard(b, guard, 0.0), "B")?;
    let c_buffer = device.upload(&vec![f32::NAN; dims.c_len() + guard], "C")?;
    let report = device.launch(
        &variant.kernel,
        shape,
        &[
            Arg::from(&a_buffer),
            Arg::from(&b_buffer),
            Arg::from(&c_buffer),
            Arg::U32(dims.m),
            Arg::U32(dims.n),
            Arg::U32(dims.k),
        ],
    )?;
    let mut result = device.download(&c_buffer)?;
    let guard_written = result[dims.c_len()..]
        .iter()
        .filter(|v| !v.is_nan())
        .count();
    result.truncate(dims.c_len());
    Ok(Outcome {
        result,
        guard_written,
        report,
    })
}

/// A climb kernel has no bounds checks: it runs only on the sizes and the launch it allows.
pub fn check_climb(
    variant: &Ch7Variant,
    tiling: Tiling,
    dims: Dims,
    shape: LaunchShape,
) -> Result<()> {
    if !tiling.allows(dims) {
        return Err(HarnessError::Invalid(format!(
            "{} needs M and N multiples of {} and {} and K a multiple of {}, which {dims} is not",
            variant.name, tiling.tile_m, tiling.tile_n, tiling.tile_k
        )));
    }
    if shape != tiling.shape(dims) {
        return Err(HarnessError::Invalid(format!(
            "{} runs only as {}, one block per tile of C, not {shape}",
            variant.name,
            tiling.shape(dims)
        )));
    }
    Ok(())
}

fn with_guard(values: &[f32], guard: usize, fill: f32) -> Vec<f32> {
    let mut padded = values.to_vec();
    padded.resize(values.len() + guard, fill);
    padded
}

fn check_lengths(a: &[f32], b: &[f32], dims: Dims) -> Result<()> {
    if a.len() != dims.a_len() || b.len() != dims.b_len() {
        return Err(HarnessError::Invalid(format!(
            "{dims} needs {} values of A and {} of B, not {} and {}",
            dims.a_len(),
            dims.b_len(),
            a.len(),
            b.len()
        )));
    }
    Ok(())
}

/// How the pipeline splits the work: the rows of A and C into `chunks`, chunk `i` on stream
/// `i % streams`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Plan {
    pub chunks: u32,
    pub streams: u32,
}

impl fmt::Display for Plan {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let plural =
            |count: u32, word: &str| format!("{count} {word}{}", if count == 1 { "" } else { "s" });
        write!(
            f,
            "{} on {}",
            plural(self.chunks, "chunk"),
            plural(self.streams, "stream")
        )
    }
}

/// Everything one pipeline run uses, allocated once so that runs can be timed: B resident on
/// the device, and per chunk its rows of A and C in page-locked host memory and on the device.
#[derive(Debug)]
pub struct Pipeline {
    dims: Dims,
    b: Buffer<f32>,
    chunks: Vec<Chunk>,
    streams: Vec<Stream>,
}

#[derive(Debug)]
struct Chunk {
    rows: u32,
    a_host: HostBuffer<f32>,
    a_device: Buffer<f32>,
    c_device: Buffer<f32>,
    c_host: HostBuffer<f32>,
}

impl Pipeline {
    /// Stages A into page-locked chunks and uploads B. `plan.chunks` is capped at M (a chunk
    /// has at least one row).
    pub fn new(device: &mut Device, a: &[f32], b: &[f32], dims: Dims, plan: Plan) -> Result<Self> {
        dims.validate()?;
        check_lengths(a, b, dims)?;
        if plan.chunks == 0 || plan.streams == 0 {
            return Err(HarnessError::Invalid(format!(
                "a pipeline needs at least one chunk and one stream, not {plan}"
            )));
        }
        let rows_per_chunk = dims.m.div_ceil(plan.chunks.min(dims.m));
        let k = dims.k as usize;
        let n = dims.n as usize;
        let mut chunks = Vec::new();
        let mut first_row = 0u32;
        while first_row < dims.m {
            let rows = rows_per_chunk.min(dims.m - first_row);
            let a_rows = &a[first_row as usize * k..(first_row + rows) as usize * k];
            let index = chunks.len();
            chunks.push(Chunk {
                rows,
                a_host: device.host_buffer(a_rows)?,
                a_device: device.zeros(a_rows.len(), &format!("A rows of chunk {index}"))?,
                c_device: device.zeros(rows as usize * n, &format!("C rows of chunk {index}"))?,
                c_host: device.host_zeros(rows as usize * n)?,
            });
            first_row += rows;
        }
        Ok(Self {
            dims,
            b: device.upload(b, "B")?,
            chunks,
            streams: device.streams(plan.streams as usize)?,
        })
    }

    // ANCHOR: pipeline_run
    /// Queues every chunk's copy in, multiply and copy out on its stream, then makes the
    /// device's own stream wait for all of them. On the emulator each call runs as it is made.
    pub fn run(&mut self, device: &mut Device, variant: &Ch7Variant) -> Result<LaunchReport> {
        device.ensure_can_run(variant)?;
        let mut findings = Vec::new();
        device.fork(&self.streams)?;
        for (index, chunk) in self.chunks.iter_mut().enumerate() {
            let stream = &self.streams[index % self.streams.len()];
            device.upload_async(stream, &chunk.a_host, &mut chunk.a_device)?;
            let shape = tiled_shape(Dims::new(chunk.rows, self.dims.n, self.dims.k));
            let report = device.launch_on(
                stream,
                &variant.kernel,
                shape,
                &[
                    Arg::from(&chunk.a_device),
                    Arg::from(&self.b),
                    Arg::from(&chunk.c_device),
                    Arg::U32(chunk.rows),
                    Arg::U32(self.dims.n),
                    Arg::U32(self.dims.k),
                ],
            )?;
            findings.extend(report.findings);
            device.download_async(stream, &chunk.c_device, &mut chunk.c_host)?;
        }
        device.join(&self.streams)?;
        Ok(LaunchReport {
            findings,
            ..LaunchReport::default()
        })
    }
    // ANCHOR_END: pipeline_run

    /// C, gathered from the chunks once their copies have finished.
    pub fn result(&self, device: &mut Device) -> Result<Vec<f32>> {
        device.synchronize()?;
        let mut c = Vec::with_capacity(self.dims.c_len());
        for chunk in &self.chunks {
            c.extend(chunk.c_host.to_vec()?);
        }
        Ok(c)
    }

    pub fn chunk_count(&self) -> usize {
        self.chunks.len()
    }
}

/// C from one run of the [`Step::Pipeline`] variant.
pub fn run_pipeline(
    device: &mut Device,
    variant: &Ch7Variant,
    a: &[f32],
    b: &[f32],
    dims: Dims,
    plan: Plan,
) -> Result<Outcome> {
    let mut pipeline = Pipeline::new(device, a, b, dims, plan)?;
    let report = pipeline.run(device, variant)?;
    Ok(Outcome {
        result: pipeline.result(device)?,
        guard_written: 0,
        report,
    })
}

/// `len` floats from `seed`, uniform in [-1, 1): signs mix, so the bound's Σ|A||B| is larger
/// than |C| and cancellation is exercised. Drawn on every core in pieces (see
/// [`harness::cli::seeded_values`]), since the GPU's matrices reach 8192²; up to 2^20 floats,
/// what one generator draws in order.
pub fn random_matrix(len: usize, seed: u64) -> Vec<f32> {
    use harness::rand::Rng;
    harness::cli::seeded_values(len, seed, |rng| rng.random_range(-1.0f32..1.0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_reference_multiplies_a_known_product() {
        // [1 2; 3 4] · [5 6; 7 8] = [19 22; 43 50]
        let (c, scale) = matmul_f64(
            &[1.0, 2.0, 3.0, 4.0],
            &[5.0, 6.0, 7.0, 8.0],
            Dims::square(2),
        );
        assert_eq!(c, vec![19.0, 22.0, 43.0, 50.0]);
        assert_eq!(scale, c);
        let (c, scale) = matmul_f64(&[1.0, -2.0], &[3.0, 4.0], Dims::new(1, 1, 2));
        assert_eq!((c[0], scale[0]), (-5.0, 11.0));
    }

    #[test]
    fn the_bound_passes_f32_rounding_and_rejects_one_wrong_term() {
        let dims = Dims::new(3, 4, 300);
        let a = random_matrix(dims.a_len(), 1);
        let b = random_matrix(dims.b_len(), 2);
        let (want, scale) = matmul_f64(&a, &b, dims);
        let mut serial = vec![0.0f32; dims.c_len()];
        for i in 0..3 {
            for j in 0..4 {
                for p in 0..300 {
                    serial[i * 4 + j] += a[i * 300 + p] * b[p * 4 + j];
                }
            }
        }
        let check = MatmulCheck::new(&serial, &want, &scale, dims.k);
        assert!(check.is_match(), "{check}");
        assert!(check.worst_fraction_of_bound < 1.0);
        // the largest term of one element dropped, as a missed tile edge would drop terms
        let largest = (0..300)
            .max_by(|&p, &q| {
                let term = |p: usize| (a[300 + p] * b[p * 4 + 1]).abs();
                term(p).total_cmp(&term(q))
            })
            .unwrap();
        serial[5] -= a[300 + largest] * b[largest * 4 + 1];
        assert!(!MatmulCheck::new(&serial, &want, &scale, dims.k).is_match());
    }

    #[test]
    fn dims_refuse_zero_and_overflowing_sizes() {
        assert!(Dims::new(0, 3, 3).validate().is_err());
        assert!(Dims::square(4096).validate().is_ok());
        let error = Dims::square(70_000).validate().unwrap_err().to_string();
        assert!(error.contains("32-bit"), "{error}");
    }
}
