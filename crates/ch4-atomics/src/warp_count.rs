//! A warp counts into shared memory and its last lane reports: where the chapter's atomics meet
//! the lanes of one warp. Every lane adds its grid-stride share's count into its warp's shared
//! counter with `atomicAdd`, and lane 31 writes the total. Without `__syncwarp()` between the
//! two, lane 31 may read before the other lanes add: a race that a warp in lockstep hides (lane
//! 31 then always adds last) and independent thread scheduling makes real. The emulator's
//! hardware schedule keeps warps in lockstep; its lanes schedule
//! ([`harness::Schedule::Lanes`]) runs lanes apart and reports it. The exercise track's
//! "warp count" exercise starts from [`KERNELS`]' first kernel.

use harness::{Arg, Device, Expect, HarnessError, LaunchReport, LaunchShape, Result};
use harness::{Variant, kernel};

/// The warp counts, in teaching order: `kernel(const float *in, unsigned n, float threshold,
/// unsigned *counts)`, on any grid of blocks of a multiple of 32 threads.
pub const KERNELS: &[Variant] = &[
    Variant {
        name: "warp-count-no-syncwarp",
        kernel: kernel!("ch4_warp_count", "01_warp_count_no_syncwarp", "warp_count"),
        expect: Expect::Race,
        summary: "lane 31 reads its warp's count with no __syncwarp() after the lanes' atomicAdd",
        kind: (),
    },
    Variant {
        name: "warp-count",
        kernel: kernel!("ch4_warp_count", "02_warp_count", "warp_count"),
        expect: Expect::Correct,
        summary: "__syncwarp() orders every lane's atomicAdd before lane 31 reads the count",
        kind: (),
    },
];

/// The kernel named `name`; panics only on a typo in this crate, caught by its tests.
pub fn variant(name: &str) -> &'static Variant {
    match harness::find_variant(KERNELS, name) {
        Ok(variant) => variant,
        Err(message) => panic!("{message}"),
    }
}

/// `n` values in [0, 1) from `seed`, so a threshold of 0.5 splits them about evenly.
pub fn input(n: usize, seed: u64) -> Vec<f32> {
    use harness::rand::Rng;
    let mut rng = harness::cli::seeded_rng(seed);
    (0..n).map(|_| rng.random::<f32>()).collect()
}

/// Per warp of the grid (block by block, warp by warp), how many of the elements its lanes'
/// grid-stride loops visit are above `threshold`.
pub fn warp_count_cpu(input: &[f32], threshold: f32, shape: LaunchShape) -> Vec<u32> {
    let threads = shape.block.x as usize;
    let blocks = shape.grid.x as usize;
    let stride = threads * blocks;
    let mut counts = vec![0u32; blocks * threads / 32];
    for (i, &x) in input.iter().enumerate() {
        let thread = i % stride;
        counts[thread / 32] += u32::from(x > threshold);
    }
    counts
}

/// What one launch produced.
#[derive(Debug)]
pub struct Outcome {
    /// One count per warp of the grid.
    pub counts: Vec<u32>,
    pub report: LaunchReport,
}

/// One launch of `variant` on `shape` (one-dimensional, blocks of a multiple of 32 threads);
/// the counts start at `u32::MAX`, so a warp whose lane 31 never wrote stands out.
pub fn run(
    device: &mut Device,
    variant: &Variant,
    input: &[f32],
    threshold: f32,
    shape: LaunchShape,
) -> Result<Outcome> {
    let threads = shape.block.x;
    if threads == 0 || !threads.is_multiple_of(32) || shape.block.y * shape.block.z != 1 {
        return Err(HarnessError::Invalid(format!(
            "the warp count takes one-dimensional blocks of a multiple of 32 threads, not {}",
            shape.block
        )));
    }
    let n = u32::try_from(input.len()).map_err(|_| {
        HarnessError::Invalid(format!("{} elements are more than u32 counts", input.len()))
    })?;
    device.ensure_can_run(variant)?;
    let warps = (shape.grid.x * threads / 32) as usize;
    let in_buffer = device.upload(input, "in")?;
    let counts = device.upload(&vec![u32::MAX; warps], "counts")?;
    let report = device.launch(
        &variant.kernel,
        shape,
        &[
            Arg::from(&in_buffer),
            Arg::U32(n),
            Arg::F32(threshold),
            Arg::from(&counts),
        ],
    )?;
    Ok(Outcome {
        counts: device.download(&counts)?,
        report,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_reference_counts_each_warps_grid_stride_share() {
        // Two blocks of 32: warp 0 sees elements 0–31 and 64–95, warp 1 sees 32–63.
        let input: Vec<f32> = (0..96)
            .map(|i| if i % 3 == 0 { 1.0 } else { 0.0 })
            .collect();
        let counts = warp_count_cpu(&input, 0.5, LaunchShape::linear(2, 32));
        assert_eq!(counts, vec![11 + 10, 11]);
    }
}
