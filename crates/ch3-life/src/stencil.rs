//! A 2D stencil with a halo, where the chapter's shared-memory tiles meet a grid that does not
//! wrap: every cell becomes the sum of itself and its four neighbours, cells past the edge
//! counting as 0. A block stages its cells in shared memory, and a tile is only complete with
//! the ring of cells around it, which belong to other blocks. The exercise track's "stencil"
//! exercise starts from [`KERNELS`]' first kernel.

use harness::{Arg, Device, Dim3, Expect, HarnessError, LaunchReport, LaunchShape, Result};
use harness::{Variant, kernel};

/// Side of a block and of the cells it owns.
pub const TILE: u32 = 16;

/// The stencils, in teaching order: `kernel(const unsigned *in, unsigned *out, unsigned width,
/// unsigned height)` on [`shape`].
pub const KERNELS: &[Variant] = &[
    Variant {
        name: "stencil-no-halo",
        kernel: kernel!("ch3_stencil", "01_stencil_no_halo", "stencil_no_halo"),
        expect: Expect::WrongResult,
        summary: "a tile without its halo: edge cells add neighbours nobody loaded",
        kind: (),
    },
    Variant {
        name: "stencil-halo",
        kernel: kernel!("ch3_stencil", "02_stencil_halo", "stencil_halo"),
        expect: Expect::Correct,
        summary: "the tile and a one-cell halo, loaded by the threads on the block's edges",
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

/// Each cell plus its four neighbours, cells past the edge counting as 0 (wrapping `u32`
/// addition, as the kernels add).
pub fn stencil_cpu(cells: &[u32], width: usize, height: usize) -> Vec<u32> {
    let at = |x: isize, y: isize| -> u32 {
        if x < 0 || y < 0 || x >= width as isize || y >= height as isize {
            0
        } else {
            cells[y as usize * width + x as usize]
        }
    };
    let mut out = Vec::with_capacity(cells.len());
    for y in 0..height as isize {
        for x in 0..width as isize {
            let sum = [(0, 0), (0, -1), (0, 1), (-1, 0), (1, 0)]
                .iter()
                .fold(0u32, |sum, (dx, dy)| sum.wrapping_add(at(x + dx, y + dy)));
            out.push(sum);
        }
    }
    out
}

/// Blocks of [`TILE`] × [`TILE`] covering the grid.
pub fn shape(width: u32, height: u32) -> LaunchShape {
    LaunchShape {
        grid: Dim3::xy(width.div_ceil(TILE).max(1), height.div_ceil(TILE).max(1)),
        block: Dim3::xy(TILE, TILE),
        dynamic_shared_bytes: 0,
    }
}

/// What one launch produced.
#[derive(Debug)]
pub struct Outcome {
    pub result: Vec<u32>,
    pub report: LaunchReport,
}

/// The stencil of a `width × height` grid from one launch of `variant` on [`shape`].
pub fn run(
    device: &mut Device,
    variant: &Variant,
    cells: &[u32],
    width: u32,
    height: u32,
) -> Result<Outcome> {
    let count = u64::from(width) * u64::from(height);
    if count != cells.len() as u64 || count > u64::from(u32::MAX) {
        return Err(HarnessError::Invalid(format!(
            "a {width} × {height} grid has {count} cells, not {}, and at most 2^32 - 1",
            cells.len()
        )));
    }
    device.ensure_can_run(variant)?;
    let input = device.upload(cells, "in")?;
    let out = device.zeros::<u32>(cells.len(), "out")?;
    device.name_cells(&input, width as usize);
    device.name_cells(&out, width as usize);
    let report = device.launch(
        &variant.kernel,
        shape(width, height),
        &[
            Arg::from(&input),
            Arg::from(&out),
            Arg::U32(width),
            Arg::U32(height),
        ],
    )?;
    Ok(Outcome {
        result: device.download(&out)?,
        report,
    })
}

/// Cells for a grid, from a seed: small values, so a sum is easy to read in a report.
pub fn cells(count: usize, seed: u64) -> Vec<u32> {
    use harness::rand::Rng;
    let mut rng = harness::cli::seeded_rng(seed);
    (0..count).map(|_| rng.random_range(0..100)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_reference_adds_a_cell_and_its_four_neighbours() {
        // 1 2 3
        // 4 5 6
        let cells = [1, 2, 3, 4, 5, 6];
        assert_eq!(stencil_cpu(&cells, 3, 2), vec![7, 11, 11, 10, 17, 14]);
        assert_eq!(stencil_cpu(&[9], 1, 1), vec![9]);
        assert_eq!(shape(17, 16).grid, Dim3::xy(2, 1));
    }
}
