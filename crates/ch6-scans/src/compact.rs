//! Stream compaction from a scan: keep the nonzero values of an array, in order, with no gaps.
//! Where each keeper goes is a scan: its tile's offset (the exclusive scan of the tiles'
//! counts, by the chapter's large-array scan) plus its rank among its tile's keepers (a scan
//! of keep flags in shared memory). The exercise track's "compaction" exercise asks for
//! [`KERNELS`]' `compact_tiles`.

use harness::{Arg, Device, Expect, HarnessError, KernelSource, LaunchReport, LaunchShape, Result};
use harness::{Variant, kernel};

use crate::{LargeScanKernels, run_large_scan};

/// Most threads a block of these kernels may have: `compact_tiles` scans in two buffers of
/// this many words.
pub const MAX_THREADS: u32 = 1024;

/// The compaction, `compact_tiles(const unsigned *in, unsigned n, const unsigned
/// *tile_offsets, unsigned *out)`, after [`count_kernel`] in the same file.
pub const KERNELS: &[Variant] = &[Variant {
    name: "compact-tiles",
    kernel: kernel!("ch6_compact", "01_compact_tiles", "compact_tiles"),
    expect: Expect::Correct,
    summary: "each tile scans its keep flags in shared memory and writes its keepers at its offset",
    kind: (),
}];

/// The kernel named `name`; panics only on a typo in this crate, caught by its tests.
pub fn variant(name: &str) -> &'static Variant {
    match harness::find_variant(KERNELS, name) {
        Ok(variant) => variant,
        Err(message) => panic!("{message}"),
    }
}

/// `count_tiles(const unsigned *in, unsigned n, unsigned *counts)`: the keepers of each tile.
pub fn count_kernel() -> KernelSource {
    KernelSource {
        entry: "count_tiles",
        ..variant("compact-tiles").kernel
    }
}

/// The nonzero values of `values`, in order.
pub fn compact_cpu(values: &[u32]) -> Vec<u32> {
    values.iter().copied().filter(|&v| v != 0).collect()
}

/// What one compaction produced.
#[derive(Debug)]
pub struct Outcome {
    /// The keepers, as many as the counts and the scan said there are.
    pub result: Vec<u32>,
    /// The findings of all the launches: the counts, the scan, the compaction.
    pub report: LaunchReport,
}

/// Compacts `values` with `compact` on tiles of `threads` elements: [`count_kernel`], the
/// chapter's large-array scan of the counts, then `compact`, each launch waited for.
pub fn run(
    device: &mut Device,
    compact: &Variant,
    values: &[u32],
    threads: u32,
) -> Result<Outcome> {
    if threads == 0 || threads > MAX_THREADS {
        return Err(HarnessError::Invalid(format!(
            "the compaction's blocks have 1 to {MAX_THREADS} threads, not {threads}"
        )));
    }
    let n = u32::try_from(values.len()).map_err(|_| {
        HarnessError::Invalid(format!(
            "{} values is more than these kernels' 32-bit indices allow",
            values.len()
        ))
    })?;
    device.ensure_can_run(compact)?;
    let tiles = n.div_ceil(threads).max(1);
    let shape = LaunchShape::linear(tiles, threads);
    let input = device.upload(values, "in")?;
    let counts = device.zeros::<u32>(tiles as usize, "counts")?;
    let mut report = device.launch(
        &count_kernel(),
        shape,
        &[Arg::from(&input), Arg::U32(n), Arg::from(&counts)],
    )?;
    let counts = device.download(&counts)?;
    let scan = crate::variant("large-array-scan");
    let offsets = run_large_scan(device, scan, LargeScanKernels::u32(scan)?, &counts, 256)?;
    report.findings.extend(offsets.report.findings);
    let offsets = offsets.result;
    let total = offsets.last().copied().unwrap_or(0) + counts.last().copied().unwrap_or(0);
    let tile_offsets = device.upload(&offsets, "tile_offsets")?;
    // Room for exactly the keepers (one word when there are none, which nobody writes).
    let out = device.zeros::<u32>(total.max(1) as usize, "out")?;
    let compacted = device.launch(
        &compact.kernel,
        shape,
        &[
            Arg::from(&input),
            Arg::U32(n),
            Arg::from(&tile_offsets),
            Arg::from(&out),
        ],
    )?;
    report.findings.extend(compacted.findings);
    let mut result = device.download(&out)?;
    result.truncate(total as usize);
    Ok(Outcome { result, report })
}

/// Values for a compaction, from a seed: each zero with probability `zeros`, else 1 to 999.
pub fn values(count: usize, zeros: f64, seed: u64) -> Vec<u32> {
    use harness::rand::Rng;
    let mut rng = harness::cli::seeded_rng(seed);
    (0..count)
        .map(|_| {
            if rng.random_bool(zeros.clamp(0.0, 1.0)) {
                0
            } else {
                rng.random_range(1..1000)
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_reference_keeps_the_nonzero_values_in_order() {
        assert_eq!(compact_cpu(&[0, 3, 0, 0, 7, 1, 0]), vec![3, 7, 1]);
        assert_eq!(compact_cpu(&[0, 0]), Vec::<u32>::new());
        let generated = values(1000, 0.5, 1);
        let zeros = generated.iter().filter(|&&v| v == 0).count();
        assert!((400..600).contains(&zeros), "{zeros} zeros of 1000");
        assert!(values(50, 1.0, 2).iter().all(|&v| v == 0));
    }
}
