//! Proptest strategies and seeded input generators for this chapter's kernels: its tests draw
//! their cases from them, and so does the exercise runner (`learn/`) when it checks a learner's
//! kernel. Behind the `testing` feature, so the walk-through does not build proptest.

use crate::shape_2d;
use harness::rand::Rng;
use harness::{LaunchShape, Schedule};
use proptest::prelude::*;

/// Most values one thread's grid-stride loop may add in these tests: it keeps the longest
/// addition chain, and so the error bound, small enough that a 0.3% error always fails it.
pub const MAX_PER_THREAD: usize = 2048;

/// Lengths from 0 and 1 through primes and non-multiples of any block up to `largest`.
pub fn length(largest: usize) -> impl Strategy<Value = usize> {
    prop_oneof![
        3 => 0usize..=64,
        3 => 65usize..=5_000,
        2 => prop::sample::select(vec![97usize, 257, 1_009, 4_099, 65_537, 100_003, 1_000_003]),
        1 => 5_001usize..=largest.max(5_001),
    ]
}

/// `len` capped so no thread of `shape` adds more than [`MAX_PER_THREAD`] values.
pub fn cap_length(len: usize, shape: LaunchShape) -> usize {
    len.min(shape.total_threads() as usize * MAX_PER_THREAD)
}

/// What the generated floats look like.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Data {
    /// uniform in [0, 1): Σ|x| is the sum, so the bound is relative to the result
    Positive,
    /// uniform in [-1, 1): the sum cancels, the bound is relative to Σ|x|
    Signed,
    /// whole numbers 0..=9: every partial sum below 2²⁴ is exact
    Digits,
    /// magnitudes from 2⁻²⁰ to 2²⁰ with random signs: rounding at every scale
    Wide,
}

pub fn data() -> impl Strategy<Value = Data> {
    prop_oneof![
        2 => Just(Data::Positive),
        1 => Just(Data::Signed),
        1 => Just(Data::Digits),
        1 => Just(Data::Wide),
    ]
}

/// Floats built from a seed rather than element by element, so millions cost nothing to
/// generate or shrink, and any failure repeats from its printed seed.
pub fn floats(len: usize, data: Data, seed: u64) -> Vec<f32> {
    let mut rng = harness::cli::seeded_rng(seed);
    (0..len)
        .map(|_| match data {
            Data::Positive => rng.random_range(0.0f32..1.0),
            Data::Signed => rng.random_range(-1.0f32..1.0),
            Data::Digits => f32::from(rng.random_range(0u8..=9)),
            Data::Wide => {
                let magnitude =
                    2f32.powi(rng.random_range(-20..=20)) * rng.random_range(1.0f32..2.0);
                if rng.random::<bool>() {
                    magnitude
                } else {
                    -magnitude
                }
            }
        })
        .collect()
}

/// Power-of-two blocks from one warp to the largest block.
pub fn power_of_two_block() -> impl Strategy<Value = u32> {
    (5u32..=10).prop_map(|power| 1 << power)
}

/// 1 to 64 blocks.
pub fn blocks() -> impl Strategy<Value = u32> {
    1u32..=64
}

/// 1D shapes of 1–64 blocks of 32–1024 threads (a power of two).
pub fn linear_shape() -> impl Strategy<Value = LaunchShape> {
    (blocks(), power_of_two_block())
        .prop_map(|(blocks, threads)| LaunchShape::linear(blocks, threads))
}

/// 1D shapes of 1–64 blocks of any whole number of warps up to 1024 threads: what the climb's
/// shuffle-based kernels accept.
pub fn whole_warp_shape() -> impl Strategy<Value = LaunchShape> {
    (blocks(), 1u32..=32).prop_map(|(blocks, warps)| LaunchShape::linear(blocks, 32 * warps))
}

/// The emulator's three schedules, with any seed.
pub fn schedule() -> impl Strategy<Value = Schedule> {
    prop_oneof![
        Just(Schedule::Hardware),
        any::<u64>().prop_map(|seed| Schedule::Random { seed }),
        any::<u64>().prop_map(|seed| Schedule::Adversarial { seed }),
        any::<u64>().prop_map(|seed| Schedule::Lanes { seed }),
    ]
}

/// A 2D block of 2⁵ to 2¹⁰ threads, split between x and y in every possible way.
pub fn block_2d() -> impl Strategy<Value = (u32, u32)> {
    (5u32..=10)
        .prop_flat_map(|total| (Just(total), 0..=total))
        .prop_map(|(total, x)| (1 << x, 1 << (total - x)))
}

/// Grids of 1–8 blocks a side: square or not.
pub fn grid_2d() -> impl Strategy<Value = (u32, u32)> {
    prop_oneof![
        (1u32..=8).prop_map(|side| (side, side)),
        (1u32..=8, 1u32..=8),
    ]
}

pub fn non_square_grid_2d() -> impl Strategy<Value = (u32, u32)> {
    (1u32..=8, 1u32..=8).prop_filter("not square", |(x, y)| x != y)
}

pub fn square_grid_2d() -> impl Strategy<Value = (u32, u32)> {
    (1u32..=8).prop_map(|side| (side, side))
}

/// Matrix sides: single rows and columns, non-multiples of any block, up to `largest`.
pub fn side(largest: usize) -> impl Strategy<Value = usize> {
    prop_oneof![
        2 => 1usize..=40,
        2 => 41usize..=300,
        1 => 301usize..=largest.max(301),
    ]
}

/// Rows capped so no thread of `shape` adds more than [`MAX_PER_THREAD`] values.
pub fn cap_rows(rows: usize, cols: usize, shape: LaunchShape) -> usize {
    let per_row = cols
        .div_ceil((shape.block.x * shape.grid.x) as usize)
        .max(1);
    let row_stride = (shape.block.y * shape.grid.y) as usize;
    rows.min(MAX_PER_THREAD / per_row * row_stride).max(1)
}

pub fn shape_of(grid: (u32, u32), block: (u32, u32)) -> LaunchShape {
    shape_2d(grid, block)
}
