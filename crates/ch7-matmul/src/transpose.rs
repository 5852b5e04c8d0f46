//! A matrix transpose through a shared-memory tile, where the chapter's tiles meet shared
//! memory's banks: loads and stores of global memory both coalesced, and a tile whose columns
//! all fall in one bank until a spare column spreads them out. The exercise track's
//! "transpose" exercise starts from [`KERNELS`]' first kernel; the emulator counts its bank
//! conflicts ([`harness::EmuSettings::bank_conflicts`]) and a GPU times the two.

use harness::{Arg, Device, Dim3, Expect, HarnessError, LaunchReport, LaunchShape, Result};
use harness::{Variant, kernel};

/// Side of the square tile a block transposes.
pub const TILE: u32 = 32;
/// Rows of threads in a block: each thread moves `TILE / ROWS` elements of its column.
pub const ROWS: u32 = 8;

/// The transposes, in teaching order: `kernel(const float *in, float *out, unsigned rows,
/// unsigned cols)` on [`shape`].
pub const KERNELS: &[Variant] = &[
    Variant {
        name: "transpose-shared",
        kernel: kernel!("ch7_transpose", "01_transpose_shared", "transpose_shared"),
        expect: Expect::Correct,
        summary: "through a 32 × 32 shared tile: coalesced both ways, 32-way bank conflicts reading its columns",
        kind: (),
    },
    Variant {
        name: "transpose-padded",
        kernel: kernel!("ch7_transpose", "02_transpose_padded", "transpose_padded"),
        expect: Expect::Correct,
        summary: "a 32 × 33 tile: the spare column puts a column's 32 words in 32 banks",
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

/// `inᵀ` on the CPU: `in` is `rows × cols`, the result `cols × rows`, both row-major.
pub fn transpose_cpu(input: &[f32], rows: usize, cols: usize) -> Vec<f32> {
    let mut out = vec![0.0; input.len()];
    for r in 0..rows {
        for c in 0..cols {
            out[c * rows + r] = input[r * cols + c];
        }
    }
    out
}

/// Blocks of [`TILE`] × [`ROWS`] threads, one per 32 × 32 tile of `in`.
pub fn shape(rows: u32, cols: u32) -> LaunchShape {
    LaunchShape {
        grid: Dim3::xy(cols.div_ceil(TILE).max(1), rows.div_ceil(TILE).max(1)),
        block: Dim3::xy(TILE, ROWS),
        dynamic_shared_bytes: 0,
    }
}

/// What one launch produced.
#[derive(Debug)]
pub struct Outcome {
    /// `inᵀ`, `cols × rows`.
    pub result: Vec<f32>,
    pub report: LaunchReport,
}

/// `inᵀ` from one launch of `variant` on [`shape`]; `out` starts as NaN, so an element no
/// thread wrote stands out.
pub fn run(
    device: &mut Device,
    variant: &Variant,
    input: &[f32],
    rows: u32,
    cols: u32,
) -> Result<Outcome> {
    let elements = u64::from(rows) * u64::from(cols);
    if elements != input.len() as u64 {
        return Err(HarnessError::Invalid(format!(
            "a {rows} × {cols} matrix has {elements} elements, not {}",
            input.len()
        )));
    }
    if elements > u64::from(u32::MAX) {
        return Err(HarnessError::Invalid(format!(
            "a {rows} × {cols} matrix is more than these kernels' 32-bit indices allow"
        )));
    }
    device.ensure_can_run(variant)?;
    let in_buffer = device.upload(input, "in")?;
    let out = device.upload(&vec![f32::NAN; input.len()], "out")?;
    let report = device.launch(
        &variant.kernel,
        shape(rows, cols),
        &[
            Arg::from(&in_buffer),
            Arg::from(&out),
            Arg::U32(rows),
            Arg::U32(cols),
        ],
    )?;
    Ok(Outcome {
        result: device.download(&out)?,
        report,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_reference_swaps_rows_and_columns() {
        // [[1, 2, 3], [4, 5, 6]] → [[1, 4], [2, 5], [3, 6]]
        let input = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0];
        assert_eq!(
            transpose_cpu(&input, 2, 3),
            vec![1.0, 4.0, 2.0, 5.0, 3.0, 6.0]
        );
        assert_eq!(shape(33, 64).grid, Dim3::xy(2, 2));
        assert_eq!(shape(1, 1).block, Dim3::xy(32, 8));
    }
}
