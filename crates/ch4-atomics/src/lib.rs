//! Chapter 4: data races, atomics and histograms.
//!
//! Every variant in [`VARIANTS`] is one kernel file in `kernels/ch4_atomics/`, in teaching
//! order; the walk-through, the tests and the book all read this list.

use harness::{Arg, Device, Expect, LaunchReport, LaunchShape, Result, Variant, kernel};

#[cfg(feature = "testing")]
pub mod testing;
#[cfg(feature = "walkthrough")]
pub mod walkthrough;
pub mod warp_count;

/// Bins of the ASCII histograms: one per 7-bit character code.
pub const ASCII_BINS: usize = 128;
/// Bins of the byte histograms of the chapter's climb: one per byte value.
pub const BYTE_BINS: usize = 256;

/// The racy-increment demonstration's launch: 10 blocks of 16 threads should count to 160.
pub const INCREMENT_SHAPE: LaunchShape = LaunchShape::linear(10, 16);

/// How a variant is driven, since its kernel's parameters say what it computes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// `kernel(int *x)`: every thread adds one to `x[0]`.
    Increment,
    /// `kernel(const unsigned char *text, unsigned n, unsigned *histo)`: 128 ASCII bins.
    AsciiHistogram,
    /// `kernel(const unsigned *values, unsigned n, unsigned *histo, unsigned bins)` with
    /// `bins * 4` bytes of dynamic shared memory.
    AnyBinsHistogram,
    /// `kernel(const unsigned char *bytes, unsigned n, unsigned *histo)`: 256 bins, one per
    /// byte value, nothing skipped.
    ByteHistogram,
}

pub type Ch4Variant = Variant<Step>;

pub const VARIANTS: &[Ch4Variant] = &[
    Variant {
        name: "racy-increment",
        kernel: kernel!("ch4_atomics", "01_racy_increment", "racy_increment"),
        expect: Expect::Race,
        summary: "x[0] = x[0] + 1 from every thread: updates are lost",
        kind: Step::Increment,
    },
    Variant {
        name: "atomic-increment",
        kernel: kernel!("ch4_atomics", "02_atomic_increment", "atomic_increment"),
        expect: Expect::Correct,
        summary: "atomicAdd(&x[0], 1): every update counts",
        kind: Step::Increment,
    },
    Variant {
        name: "histogram-global-atomics",
        kernel: kernel!(
            "ch4_atomics",
            "03_histogram_global_atomics",
            "histogram_global_atomics"
        ),
        expect: Expect::Correct,
        summary: "ASCII histogram, grid-stride loop, one global atomicAdd per byte",
        kind: Step::AsciiHistogram,
    },
    Variant {
        name: "histogram-no-atomics",
        kernel: kernel!(
            "ch4_atomics",
            "04_histogram_no_atomics",
            "histogram_no_atomics"
        ),
        expect: Expect::Race,
        summary: "histo[c] += 1 without atomics: counts of the same letter are lost",
        kind: Step::AsciiHistogram,
    },
    Variant {
        name: "histogram-shared",
        kernel: kernel!("ch4_atomics", "05_histogram_shared", "histogram_shared"),
        expect: Expect::Correct,
        summary: "privatized: per-block histogram in shared memory, merged once per bin",
        kind: Step::AsciiHistogram,
    },
    Variant {
        name: "histogram-shared-no-merge-barrier",
        kernel: kernel!(
            "ch4_atomics",
            "06_histogram_shared_no_merge_barrier",
            "histogram_shared_no_merge_barrier"
        ),
        expect: Expect::Race,
        summary: "privatized without the barrier before the merge: merges bins still being counted",
        kind: Step::AsciiHistogram,
    },
    Variant {
        name: "histogram-shared-one-bin-per-thread",
        kernel: kernel!(
            "ch4_atomics",
            "07_histogram_shared_one_bin_per_thread",
            "histogram_shared_one_bin_per_thread"
        ),
        expect: Expect::WrongResult,
        summary: "privatized, thread t zeroes and merges bin t: right only with 128 threads per block",
        kind: Step::AsciiHistogram,
    },
    Variant {
        name: "histogram-any-bins",
        kernel: kernel!("ch4_atomics", "08_histogram_any_bins", "histogram_any_bins"),
        expect: Expect::Correct,
        summary: "privatized for any bin count, sized at launch with dynamic shared memory",
        kind: Step::AnyBinsHistogram,
    },
    Variant {
        name: "histogram-bytes-shared",
        kernel: kernel!(
            "ch4_atomics",
            "09_histogram_bytes_shared",
            "histogram_bytes_shared"
        ),
        expect: Expect::Correct,
        summary: "histogram-shared with 256 bins, one per byte value: where the climb starts",
        kind: Step::ByteHistogram,
    },
    Variant {
        name: "histogram-bytes-uint4",
        kernel: kernel!(
            "ch4_atomics",
            "10_histogram_bytes_uint4",
            "histogram_bytes_uint4"
        ),
        expect: Expect::Correct,
        summary: "16 bytes per load (a uint4), counted from registers",
        kind: Step::ByteHistogram,
    },
    Variant {
        name: "histogram-bytes-warp-aggregated",
        kernel: kernel!(
            "ch4_atomics",
            "11_histogram_bytes_warp_aggregated",
            "histogram_bytes_warp_aggregated"
        ),
        expect: Expect::Correct,
        summary: "lanes with the same byte find each other with __match_any_sync; one atomic for all",
        kind: Step::ByteHistogram,
    },
    Variant {
        name: "histogram-bytes-lane-copies",
        kernel: kernel!(
            "ch4_atomics",
            "12_histogram_bytes_lane_copies",
            "histogram_bytes_lane_copies"
        ),
        expect: Expect::Correct,
        summary: "32 copies of the bins, one per lane, each in its own bank: no two lanes collide",
        kind: Step::ByteHistogram,
    },
    Variant {
        name: "histogram-bytes-lane-pairs",
        kernel: kernel!(
            "ch4_atomics",
            "13_histogram_bytes_lane_pairs",
            "histogram_bytes_lane_pairs"
        ),
        expect: Expect::Correct,
        summary: "16 copies, two lanes to a word in 16-bit halves, flushed before a half can overflow",
        kind: Step::ByteHistogram,
    },
];

/// The byte-histogram variants in the order of the chapter's climb.
pub const BYTE_HISTOGRAM_CLIMB: [&str; 4] = [
    "histogram-bytes-shared",
    "histogram-bytes-uint4",
    "histogram-bytes-warp-aggregated",
    "histogram-bytes-lane-copies",
];

/// The variant named `name`; panics only on a typo in this crate, caught by its tests.
pub fn variant(name: &str) -> &'static Ch4Variant {
    match harness::find_variant(VARIANTS, name) {
        Ok(variant) => variant,
        Err(message) => panic!("{message}"),
    }
}

/// Block sizes variant 7 may be launched with on a GPU: above 128 its zeroing writes past
/// the end of its shared array, which a real GPU reports as an illegal address that ends the
/// process's CUDA context. The emulator's memcheck reports those shapes instead.
pub const ONE_BIN_PER_THREAD_SAFE_MAX_BLOCK: u32 = ASCII_BINS as u32;

// ANCHOR: cpu_references
/// The CPU reference, written as a plain loop.
pub fn ascii_histogram_loop(text: &[u8]) -> Vec<u32> {
    let mut histo = vec![0u32; ASCII_BINS];
    for &byte in text {
        if usize::from(byte) < ASCII_BINS {
            histo[usize::from(byte)] += 1;
        }
    }
    histo
}

/// The same histogram, written the way Rust code usually counts.
pub fn ascii_histogram_idiomatic(text: &[u8]) -> Vec<u32> {
    text.iter()
        .filter(|byte| byte.is_ascii())
        .fold(vec![0u32; ASCII_BINS], |mut histo, &byte| {
            histo[usize::from(byte)] += 1;
            histo
        })
}
// ANCHOR_END: cpu_references

/// Reference for [`Step::ByteHistogram`]: how many times each byte value occurs.
pub fn byte_histogram(bytes: &[u8]) -> Vec<u32> {
    let mut histo = vec![0u32; BYTE_BINS];
    for &byte in bytes {
        histo[usize::from(byte)] += 1;
    }
    histo
}

/// `reference` (one of the histograms above) on every core, for the GPU's GiB inputs: each
/// piece of `bytes` is counted by `reference` itself, and a histogram of the whole is the sum
/// of its pieces' histograms, count for count.
pub fn histogram_on_every_core(
    bytes: &[u8],
    reference: impl Fn(&[u8]) -> Vec<u32> + Sync,
) -> Vec<u32> {
    use rayon::prelude::*;
    bytes
        .par_chunks(1 << 22)
        .map(&reference)
        .reduce_with(|mut total, piece| {
            for (total, count) in total.iter_mut().zip(piece) {
                *total += count;
            }
            total
        })
        .unwrap_or_else(|| reference(&[]))
}

/// Reference for [`Step::AnyBinsHistogram`]: values at or above `bins` are not counted.
pub fn histogram_loop(values: &[u32], bins: usize) -> Vec<u32> {
    let mut histo = vec![0u32; bins];
    for &value in values {
        if let Some(count) = usize::try_from(value).ok().and_then(|v| histo.get_mut(v)) {
            *count += 1;
        }
    }
    histo
}

pub fn histogram_idiomatic(values: &[u32], bins: usize) -> Vec<u32> {
    values
        .iter()
        .filter_map(|&value| usize::try_from(value).ok().filter(|&v| v < bins))
        .fold(vec![0u32; bins], |mut histo, bin| {
            histo[bin] += 1;
            histo
        })
}

/// What one launch produced.
#[derive(Debug)]
pub struct Outcome<T> {
    pub result: T,
    pub report: LaunchReport,
}

/// The counter after one launch of an [`Step::Increment`] variant.
pub fn run_increment(
    device: &mut Device,
    variant: &Ch4Variant,
    shape: LaunchShape,
) -> Result<Outcome<i32>> {
    device.ensure_can_run(variant)?;
    let counter = device.zeros::<i32>(1, "x")?;
    let report = device.launch(&variant.kernel, shape, &[Arg::from(&counter)])?;
    let result = device
        .download(&counter)?
        .first()
        .copied()
        .unwrap_or_default();
    Ok(Outcome { result, report })
}

/// The 128-bin histogram of `text` from one launch of an [`Step::AsciiHistogram`] variant.
pub fn run_ascii_histogram(
    device: &mut Device,
    variant: &Ch4Variant,
    text: &[u8],
    shape: LaunchShape,
) -> Result<Outcome<Vec<u32>>> {
    device.ensure_can_run(variant)?;
    let length = length_u32(text.len())?;
    let text_buffer = device.upload(text, "text")?;
    let histo = device.zeros::<u32>(ASCII_BINS, "histo")?;
    let report = device.launch(
        &variant.kernel,
        shape,
        &[Arg::from(&text_buffer), Arg::U32(length), Arg::from(&histo)],
    )?;
    Ok(Outcome {
        result: device.download(&histo)?,
        report,
    })
}

/// The `bins`-bin histogram of `values` from one launch of [`Step::AnyBinsHistogram`]; the
/// dynamic shared memory is sized here from `bins`.
pub fn run_any_bins_histogram(
    device: &mut Device,
    variant: &Ch4Variant,
    values: &[u32],
    bins: u32,
    blocks: u32,
    threads_per_block: u32,
) -> Result<Outcome<Vec<u32>>> {
    device.ensure_can_run(variant)?;
    let length = length_u32(values.len())?;
    let shape = any_bins_shape(bins, blocks, threads_per_block)?;
    let value_buffer = device.upload(values, "values")?;
    let histo = device.zeros::<u32>(bins as usize, "histo")?;
    let report = device.launch(
        &variant.kernel,
        shape,
        &[
            Arg::from(&value_buffer),
            Arg::U32(length),
            Arg::from(&histo),
            Arg::U32(bins),
        ],
    )?;
    Ok(Outcome {
        result: device.download(&histo)?,
        report,
    })
}

/// The 256-bin histogram of `bytes` from one launch of a [`Step::ByteHistogram`] variant.
pub fn run_byte_histogram(
    device: &mut Device,
    variant: &Ch4Variant,
    bytes: &[u8],
    shape: LaunchShape,
) -> Result<Outcome<Vec<u32>>> {
    device.ensure_can_run(variant)?;
    check_byte_histogram_shape(variant, shape)?;
    let length = length_u32(bytes.len())?;
    let bytes_buffer = device.upload(bytes, "bytes")?;
    let histo = device.zeros::<u32>(BYTE_BINS, "histo")?;
    let report = device.launch(
        &variant.kernel,
        shape,
        &[
            Arg::from(&bytes_buffer),
            Arg::U32(length),
            Arg::from(&histo),
        ],
    )?;
    Ok(Outcome {
        result: device.download(&histo)?,
        report,
    })
}

/// Refuses what a byte-histogram kernel would get wrong: the warp-aggregated kernel's
/// `__match_any_sync` names all 32 lanes, so its blocks must be whole warps.
pub fn check_byte_histogram_shape(variant: &Ch4Variant, shape: LaunchShape) -> Result<()> {
    if variant.kind != Step::ByteHistogram {
        return Err(harness::HarnessError::Invalid(format!(
            "{} is a {:?} variant, not a byte histogram; see --list",
            variant.name, variant.kind
        )));
    }
    let whole_warps = variant.kernel.source.contains("__match_any_sync");
    if whole_warps && !shape.block.x.is_multiple_of(32) {
        return Err(harness::HarnessError::BadLaunch {
            entry: variant.kernel.entry.to_string(),
            grid: shape.grid.to_string(),
            block: shape.block.to_string(),
            reason: format!(
                "its __match_any_sync takes all 32 lanes of a warp, so blockDim.x must be a multiple of 32, not {}",
                shape.block.x
            ),
        });
    }
    Ok(())
}

/// The launch shape for `bins` bins: one `u32` of dynamic shared memory per bin.
pub fn any_bins_shape(bins: u32, blocks: u32, threads_per_block: u32) -> Result<LaunchShape> {
    let bytes = bins.checked_mul(4).ok_or_else(|| {
        harness::HarnessError::Invalid(format!("{bins} bins need more than 4 GiB of shared memory"))
    })?;
    Ok(LaunchShape::linear(blocks, threads_per_block).with_dynamic_shared(bytes))
}

/// The kernels take the length as `unsigned int`.
fn length_u32(len: usize) -> Result<u32> {
    u32::try_from(len).map_err(|_| {
        harness::HarnessError::Invalid(format!(
            "{len} elements is more than these kernels' 32-bit length allows"
        ))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn histograms_on_every_core_are_the_serial_ones() {
        let bytes: Vec<u8> = (0..(9u32 << 20) + 3)
            .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
            .collect();
        assert_eq!(
            histogram_on_every_core(&bytes, byte_histogram),
            byte_histogram(&bytes)
        );
        assert_eq!(
            histogram_on_every_core(&bytes, ascii_histogram_loop),
            ascii_histogram_loop(&bytes)
        );
        assert_eq!(
            histogram_on_every_core(&[], byte_histogram),
            vec![0; BYTE_BINS]
        );
    }

    #[test]
    fn references_agree_on_a_known_text() {
        let text = b"Hello, World! \xff\x80aaa";
        let histo = ascii_histogram_loop(text);
        assert_eq!(histo[usize::from(b'l')], 3);
        assert_eq!(histo[usize::from(b'a')], 3);
        assert_eq!(histo[usize::from(b'H')], 1);
        assert_eq!(
            histo.iter().sum::<u32>(),
            17,
            "the two bytes >= 128 are skipped"
        );
        assert_eq!(ascii_histogram_idiomatic(text), histo);
        assert_eq!(histogram_loop(&[0, 1, 1, 5, 9], 6), vec![1, 2, 0, 0, 0, 1]);
        assert_eq!(
            histogram_idiomatic(&[0, 1, 1, 5, 9], 6),
            vec![1, 2, 0, 0, 0, 1]
        );
        let bytes = byte_histogram(text);
        assert_eq!(
            (bytes[0xff], bytes[0x80], bytes[usize::from(b'a')]),
            (1, 1, 3)
        );
        assert_eq!(bytes.iter().sum::<u32>(), text.len() as u32);
    }
}
