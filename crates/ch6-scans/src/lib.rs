//! Chapter 6: parallel prefix sums (scans): Hillis–Steele, Blelloch, and the race real GPUs hide.
//!
//! Every variant in [`VARIANTS`] is one kernel file in `kernels/ch6_scans/`; the walk-through,
//! the tests and the book all read this list. Integer scans use `unsigned int` arithmetic, which
//! wraps exactly like Rust's `wrapping_add`, so every order of additions gives the same answer
//! and results compare exactly; the large-array scan also runs on `f32`, compared within the
//! rounding-error bound of its additions.

use harness::{
    Arg, Buffer, Device, Element, Expect, Finding, HarnessError, KernelSource, LaunchReport,
    LaunchShape, Result, Variant, kernel,
};

pub mod compact;
#[cfg(feature = "testing")]
pub mod testing;
#[cfg(feature = "walkthrough")]
pub mod walkthrough;

/// The most elements one block scans with one thread per element.
pub const MAX_ONE_BLOCK_INCLUSIVE: usize = 1024;
/// The most elements the one-block Blelloch kernels scan: two per thread.
pub const MAX_ONE_BLOCK_EXCLUSIVE: usize = 2048;
/// Threads per block of the large-array scan and the per-level launches unless told otherwise.
pub const DEFAULT_THREADS: u32 = 512;
/// The kernels index with 32-bit `unsigned int`, and Blelloch pads to a power of two.
pub const MAX_LEN: usize = 1 << 31;

/// How a variant is driven, since its kernel's parameters say what it computes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// `kernel(const unsigned *in, unsigned *out, unsigned n)`: inclusive scan, one block of at
    /// least `n` threads, one element each.
    OneBlockInclusive,
    /// `kernel(const unsigned *in, unsigned *out, unsigned n)`: exclusive scan, one block, two
    /// elements per thread.
    OneBlockExclusive,
    /// `kernel(const unsigned *in, unsigned *out, unsigned n)` on `⌈n / block⌉` blocks,
    /// meant as an inclusive scan of all `n`.
    GridInclusive,
    /// `up_sweep(unsigned *data, unsigned m, unsigned stride)` (the variant's kernel) and this
    /// `down_sweep` with the same parameters, launched once per level each.
    MultiLaunch { down_sweep: KernelSource },
    /// `scan_tiles_u32(in, out, tile_sums, n)` (the variant's kernel), `add_u32(data,
    /// tile_offsets, n)`, and the same pair for `f32`.
    LargeArray {
        add_u32: KernelSource,
        scan_f32: KernelSource,
        add_f32: KernelSource,
    },
    /// `inclusive_to_exclusive(inclusive, exclusive, n)` (the variant's kernel) and
    /// `to_inclusive(exclusive, in, inclusive, n)`.
    Convert { to_inclusive: KernelSource },
    /// A kernel NVRTC refuses; `kernel(int *x, int d, int n)` had it compiled.
    DoesNotCompile,
    /// The climb's three passes: `reduce_tiles(in, n, tile_sums)` (the variant's kernel), then
    /// `scan_tile_sums(tile_sums, tiles)` on one block, then `scan_tiles(in, out, n,
    /// tile_offsets)`; exclusive, tiles of `16 · blockDim` elements. `coalesced`: the last two
    /// store through shared memory and take [`tile_shared_bytes`] of it.
    ReduceThenScan {
        scan_sums: KernelSource,
        scan_tiles: KernelSource,
        coalesced: bool,
    },
    /// The climb's single-pass scans: one launch of `kernel(in, out, n, tile_counter, …)`,
    /// exclusive, tiles of `items · blockDim` elements numbered in the order blocks start, with
    /// [`tile_shared_bytes`] of shared memory; `state` says what else each tile publishes, and
    /// `max_threads` is the largest block its `__launch_bounds__` allow.
    SinglePass {
        state: PassState,
        items: u32,
        max_threads: u32,
    },
}

impl Step {
    /// A single pass on tiles of [`TILE_ITEMS`] per thread, blocks up to [`MAX_TILE_THREADS`].
    const fn single_pass(state: PassState) -> Step {
        Step::SinglePass {
            state,
            items: TILE_ITEMS,
            max_threads: MAX_TILE_THREADS,
        }
    }
}

/// What the tiles of a single-pass scan publish to each other, after `tile_counter`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PassState {
    /// `volatile unsigned *flags, unsigned *inclusive_prefixes`: each tile waits for the one
    /// before it.
    Chained,
    /// `volatile unsigned *flags, unsigned *aggregates, unsigned *inclusive_prefixes`: the
    /// decoupled look-back, one predecessor at a time.
    LookBack,
    /// `volatile unsigned long long *status`: state and value in one 64-bit word per tile, read
    /// 32 tiles at a time by a warp.
    PackedStatus,
}

/// Elements each thread of the climb's tile scans owns, but for the last rung's.
pub const TILE_ITEMS: u32 = 16;
/// The largest block of the climb's tile scans (their `__launch_bounds__`), but for the last
/// rung's.
pub const MAX_TILE_THREADS: u32 = 512;
/// Elements each thread of `bigger-tiles` owns.
pub const BIGGER_TILE_ITEMS: u32 = 24;
/// The largest block of `bigger-tiles` (its `__launch_bounds__`): at 512 threads its stores
/// would need 50,688 bytes of dynamic shared memory, more than the 48 KiB a launch gets.
pub const MAX_BIGGER_TILE_THREADS: u32 = 256;
/// Threads per block of the climb's scans in the walk-through's GPU runs.
pub const CLIMB_THREADS: u32 = 256;

/// Dynamic shared memory of the climb's kernels that store through shared memory: each warp's
/// 32 × `items` results plus one word of padding per 32.
pub fn tile_shared_bytes(items: u32, threads: u32) -> u32 {
    threads / 32 * (32 * items + items) * 4
}

/// Elements each thread of `variant`'s tiles owns.
pub fn tile_items(variant: &Ch6Variant) -> u32 {
    match variant.kind {
        Step::SinglePass { items, .. } => items,
        _ => TILE_ITEMS,
    }
}

/// The largest block `variant`'s tile scan runs.
pub fn max_tile_threads(variant: &Ch6Variant) -> u32 {
    match variant.kind {
        Step::SinglePass { max_threads, .. } => max_threads,
        _ => MAX_TILE_THREADS,
    }
}

/// Elements of one of `variant`'s tiles with `threads` per block.
pub fn tile_len(variant: &Ch6Variant, threads: u32) -> usize {
    (threads * tile_items(variant)) as usize
}

pub type Ch6Variant = Variant<Step>;

pub const VARIANTS: &[Ch6Variant] = &[
    Variant {
        name: "hillis-steele-double-buffer",
        kernel: kernel!(
            "ch6_scans",
            "01_hillis_steele_double_buffer",
            "hillis_steele_double_buffer"
        ),
        expect: Expect::Correct,
        summary: "inclusive scan in one block: each step reads one buffer, writes the other",
        kind: Step::OneBlockInclusive,
    },
    Variant {
        name: "blelloch-multi-launch",
        kernel: kernel!("ch6_scans", "02_blelloch_multi_launch", "blelloch_up_sweep"),
        expect: Expect::Correct,
        summary: "exclusive scan of any length: one up-sweep and one down-sweep launch per level",
        kind: Step::MultiLaunch {
            down_sweep: kernel!(
                "ch6_scans",
                "02_blelloch_multi_launch",
                "blelloch_down_sweep"
            ),
        },
    },
    Variant {
        name: "blelloch-shared",
        kernel: kernel!("ch6_scans", "03_blelloch_shared", "blelloch_shared"),
        expect: Expect::Correct,
        summary: "exclusive scan in one block's shared memory, padded to a power of two",
        kind: Step::OneBlockExclusive,
    },
    Variant {
        name: "large-array-scan",
        kernel: kernel!("ch6_scans", "04_large_array_scan", "scan_tiles_u32"),
        expect: Expect::Correct,
        summary: "scan tiles, scan the tile sums, add each tile's offset: any length",
        kind: Step::LargeArray {
            add_u32: kernel!("ch6_scans", "04_large_array_scan", "add_tile_offsets_u32"),
            scan_f32: kernel!("ch6_scans", "04_large_array_scan", "scan_tiles_f32"),
            add_f32: kernel!("ch6_scans", "04_large_array_scan", "add_tile_offsets_f32"),
        },
    },
    Variant {
        name: "inclusive-exclusive",
        kernel: kernel!(
            "ch6_scans",
            "05_inclusive_exclusive",
            "inclusive_to_exclusive"
        ),
        expect: Expect::Correct,
        summary: "inclusive ⇄ exclusive, out of place, keeping the last element",
        kind: Step::Convert {
            to_inclusive: kernel!(
                "ch6_scans",
                "05_inclusive_exclusive",
                "exclusive_to_inclusive"
            ),
        },
    },
    Variant {
        name: "hillis-steele-single-buffer",
        kernel: kernel!(
            "ch6_scans",
            "06_hillis_steele_single_buffer",
            "hillis_steele_single_buffer"
        ),
        expect: Expect::Race,
        summary: "the seed's one-buffer scan: usually right on a GPU, a race all the same",
        kind: Step::OneBlockInclusive,
    },
    Variant {
        name: "down-sweep-does-not-compile",
        kernel: kernel!("ch6_scans", "07_down_sweep_does_not_compile", "down_sweep"),
        expect: Expect::CompileError,
        summary: "the seed's down-sweep as printed: NVRTC refuses it",
        kind: Step::DoesNotCompile,
    },
    Variant {
        name: "blelloch-no-padding",
        kernel: kernel!("ch6_scans", "08_blelloch_no_padding", "blelloch_no_padding"),
        expect: Expect::WrongResult,
        summary: "Blelloch on n itself: right for powers of two, wrong for any other n",
        kind: Step::OneBlockExclusive,
    },
    Variant {
        name: "hillis-steele-multi-block",
        kernel: kernel!(
            "ch6_scans",
            "09_hillis_steele_multi_block",
            "hillis_steele_multi_block"
        ),
        expect: Expect::WrongResult,
        summary: "Hillis–Steele on many blocks: each block scans only its own tile",
        kind: Step::GridInclusive,
    },
    Variant {
        name: "reduce-then-scan",
        kernel: kernel!("ch6_scans", "10_reduce_then_scan", "reduce_tiles"),
        expect: Expect::Correct,
        summary: "sum each tile, scan the tile sums, scan each tile from its offset: three passes",
        kind: Step::ReduceThenScan {
            scan_sums: kernel!("ch6_scans", "10_reduce_then_scan", "scan_tile_sums"),
            scan_tiles: kernel!("ch6_scans", "10_reduce_then_scan", "scan_tiles"),
            coalesced: false,
        },
    },
    Variant {
        name: "coalesced-stores",
        kernel: kernel!("ch6_scans", "11_coalesced_stores", "reduce_tiles"),
        expect: Expect::Correct,
        summary: "reduce, then scan, each warp storing whole 128-byte lines through shared memory",
        kind: Step::ReduceThenScan {
            scan_sums: kernel!("ch6_scans", "11_coalesced_stores", "scan_tile_sums"),
            scan_tiles: kernel!("ch6_scans", "11_coalesced_stores", "scan_tiles"),
            coalesced: true,
        },
    },
    Variant {
        name: "chained-scan",
        kernel: kernel!("ch6_scans", "12_chained_scan", "chained_scan"),
        expect: Expect::Correct,
        summary: "one pass: each tile waits for the previous tile's prefix, then passes its own on",
        kind: Step::single_pass(PassState::Chained),
    },
    Variant {
        name: "decoupled-lookback",
        kernel: kernel!("ch6_scans", "13_decoupled_lookback", "decoupled_lookback"),
        expect: Expect::Correct,
        summary: "one pass: publish the tile's sum at once, add predecessors' sums back to a prefix",
        kind: Step::single_pass(PassState::LookBack),
    },
    Variant {
        name: "warp-lookback",
        kernel: kernel!("ch6_scans", "14_warp_lookback", "warp_lookback"),
        expect: Expect::Correct,
        summary: "the look-back by a warp, 32 tiles at a time, state and value in one 64-bit word",
        kind: Step::single_pass(PassState::PackedStatus),
    },
    Variant {
        name: "lookback-no-fence",
        kernel: kernel!("ch6_scans", "15_lookback_no_fence", "lookback_no_fence"),
        expect: Expect::Race,
        summary: "the look-back's publish with no fence between the value and its flag",
        kind: Step::single_pass(PassState::LookBack),
    },
    Variant {
        name: "lookback-flag-before-data",
        kernel: kernel!(
            "ch6_scans",
            "16_lookback_flag_before_data",
            "lookback_flag_before_data"
        ),
        expect: Expect::Race,
        summary: "the look-back's publish setting the flag before writing the value",
        kind: Step::single_pass(PassState::LookBack),
    },
    Variant {
        name: "lookback-no-acquire",
        kernel: kernel!("ch6_scans", "17_lookback_no_acquire", "lookback_no_acquire"),
        expect: Expect::Race,
        summary: "the look-back reading a predecessor's value with no fence after its flag",
        kind: Step::single_pass(PassState::LookBack),
    },
    Variant {
        name: "blelloch-shared-conflict-free",
        kernel: kernel!(
            "ch6_scans",
            "18_blelloch_shared_conflict_free",
            "blelloch_shared_conflict_free"
        ),
        expect: Expect::Correct,
        summary: "blelloch-shared with a word of padding per 32: the tree's accesses at most 2-way",
        kind: Step::OneBlockExclusive,
    },
    Variant {
        name: "bigger-tiles",
        kernel: kernel!("ch6_scans", "19_bigger_tiles", "bigger_tiles"),
        expect: Expect::Correct,
        summary: "warp-lookback on tiles 1.5 times as large: a third fewer tiles claim and look back",
        kind: Step::SinglePass {
            state: PassState::PackedStatus,
            items: BIGGER_TILE_ITEMS,
            max_threads: MAX_BIGGER_TILE_THREADS,
        },
    },
];

/// The variant named `name`; panics only on a typo in this crate, caught by its tests.
pub fn variant(name: &str) -> &'static Ch6Variant {
    match harness::find_variant(VARIANTS, name) {
        Ok(variant) => variant,
        Err(message) => panic!("{message}"),
    }
}

// ANCHOR: cpu_references
/// Inclusive scan: element `i` is `x[0] + … + x[i]`, wrapping like `unsigned int`.
pub fn inclusive_scan(x: &[u32]) -> Vec<u32> {
    x.iter()
        .scan(0u32, |sum, &v| {
            *sum = sum.wrapping_add(v);
            Some(*sum)
        })
        .collect()
}

/// Exclusive scan: element `i` is `x[0] + … + x[i - 1]`, so element 0 is the identity, 0.
pub fn exclusive_scan(x: &[u32]) -> Vec<u32> {
    x.iter()
        .scan(0u32, |sum, &v| {
            let before = *sum;
            *sum = sum.wrapping_add(v);
            Some(before)
        })
        .collect()
}
// ANCHOR_END: cpu_references

/// [`exclusive_scan`] on every core, for a GPU's inputs of hundreds of millions of elements:
/// the same function scans each piece, and each piece's values are then offset by the wrapping
/// sum of the pieces before it. Wrapping addition is associative, so the result is the serial
/// scan's, bit for bit; it is the same algorithm as the large-array kernels', with pieces for
/// tiles.
pub fn exclusive_scan_on_every_core(x: &[u32]) -> Vec<u32> {
    use rayon::prelude::*;
    const PIECE: usize = 1 << 20;
    let piece_sums: Vec<u32> = x
        .par_chunks(PIECE)
        .map(|piece| piece.iter().fold(0u32, |sum, &v| sum.wrapping_add(v)))
        .collect();
    let offsets = exclusive_scan(&piece_sums);
    let mut scanned = vec![0u32; x.len()];
    scanned
        .par_chunks_mut(PIECE)
        .zip(x.par_chunks(PIECE))
        .zip(offsets)
        .for_each(|((out, piece), offset)| {
            for (out, value) in out.iter_mut().zip(exclusive_scan(piece)) {
                *out = value.wrapping_add(offset);
            }
        });
    scanned
}

/// The exclusive scan of `f32` values in `f64`, the reference for the `f32` kernels.
pub fn exclusive_scan_f64(x: &[f32]) -> Vec<f64> {
    x.iter()
        .scan(0f64, |sum, &v| {
            let before = *sum;
            *sum += f64::from(v);
            Some(before)
        })
        .collect()
}

/// `Σ_{j<i} |x_j|` for each `i`: the size the rounding bound of element `i` scales with.
pub fn exclusive_abs_sums(x: &[f32]) -> Vec<f64> {
    x.iter()
        .scan(0f64, |sum, &v| {
            let before = *sum;
            *sum += f64::from(v).abs();
            Some(before)
        })
        .collect()
}

/// `n` rounded up to a power of two, at least 2: the width of a Blelloch tree over `n` leaves.
pub fn padded_len(n: usize) -> usize {
    n.max(2).next_power_of_two()
}

// ANCHOR: index_pattern
/// The pairs `(left, right)` the up-sweep combines at each level over `m` (a power of two)
/// elements, `right += left`: exactly the indices of `02_blelloch_multi_launch.cu` and
/// `03_blelloch_shared.cu` (thread `k`, stride `s`: `right = (k + 1)·s − 1`, `left = right − s/2`).
/// The down-sweep visits the same pairs, levels in reverse.
pub fn up_sweep_levels(m: usize) -> Vec<Vec<(usize, usize)>> {
    let mut levels = Vec::new();
    let mut stride = 2;
    while stride <= m {
        levels.push(
            (0..m / stride)
                .map(|k| {
                    let right = (k + 1) * stride - 1;
                    (right - stride / 2, right)
                })
                .collect(),
        );
        stride *= 2;
    }
    levels
}
// ANCHOR_END: index_pattern

/// Additions performed and parallel steps taken by a scan algorithm.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WorkSpan {
    /// Every `+` performed, by any thread.
    pub additions: u64,
    /// Steps separated by a barrier (or a launch): the span, if every step takes one time unit.
    pub steps: u64,
}

/// Hillis–Steele as `01_hillis_steele_double_buffer.cu` runs it, counting its additions.
pub fn hillis_steele_counted(x: &[u32]) -> (Vec<u32>, WorkSpan) {
    let mut from = x.to_vec();
    let mut counted = WorkSpan {
        additions: 0,
        steps: 0,
    };
    let mut offset = 1;
    while offset < x.len() {
        let to: Vec<u32> = (0..x.len())
            .map(|tid| {
                if tid >= offset {
                    counted.additions += 1;
                    from[tid].wrapping_add(from[tid - offset])
                } else {
                    from[tid]
                }
            })
            .collect();
        from = to;
        counted.steps += 1;
        offset *= 2;
    }
    (from, counted)
}

/// Blelloch as `03_blelloch_shared.cu` runs it (padded, up-sweep, clear, down-sweep),
/// counting its additions; returns the exclusive scan.
pub fn blelloch_counted(x: &[u32]) -> (Vec<u32>, WorkSpan) {
    let m = padded_len(x.len());
    let mut temp = x.to_vec();
    temp.resize(m, 0);
    let mut counted = WorkSpan {
        additions: 0,
        steps: 0,
    };
    let levels = up_sweep_levels(m);
    for level in &levels {
        for &(left, right) in level {
            temp[right] = temp[right].wrapping_add(temp[left]);
            counted.additions += 1;
        }
        counted.steps += 1;
    }
    temp[m - 1] = 0;
    for level in levels.iter().rev() {
        for &(left, right) in level {
            let t = temp[left];
            temp[left] = temp[right];
            temp[right] = temp[right].wrapping_add(t);
            counted.additions += 1;
        }
        counted.steps += 1;
    }
    temp.truncate(x.len());
    (temp, counted)
}

/// One level of the up-sweep of `03_blelloch_shared.cu` as the first warp sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BankLevel {
    /// Words between the two elements a thread combines.
    pub offset: usize,
    /// Threads of warp 0 that take part (`tid < d`).
    pub active_lanes: usize,
    /// The most distinct shared-memory words of warp 0's `temp[bi]` access in one of the 32
    /// banks: a `ways`-way conflict makes the access take `ways` times as long.
    pub ways: usize,
    /// The same with `18_blelloch_shared_conflict_free.cu`'s padding: element `i` at word
    /// `i + i / 32`.
    pub padded_ways: usize,
}

/// Bank conflicts of the up-sweep over `m` elements: shared memory has 32 banks of 4-byte
/// words, word `w` in bank `w % 32`; a warp's access costs as many passes as the most distinct
/// words that fall in one bank.
pub fn up_sweep_bank_conflicts(m: usize) -> Vec<BankLevel> {
    let mut levels = Vec::new();
    let mut offset = 1;
    let mut d = m / 2;
    while d > 0 {
        let active = d.min(32);
        let ways = |word: &dyn Fn(usize) -> usize| {
            let mut words_per_bank = vec![std::collections::BTreeSet::new(); 32];
            for tid in 0..active {
                let w = word(offset * (2 * tid + 2) - 1);
                words_per_bank[w % 32].insert(w);
            }
            words_per_bank.iter().map(|w| w.len()).max().unwrap_or(0)
        };
        levels.push(BankLevel {
            offset,
            active_lanes: active,
            ways: ways(&|bi| bi),
            padded_ways: ways(&|bi| bi + bi / 32),
        });
        offset *= 2;
        d /= 2;
    }
    levels
}

/// What a scan produced, and what it took.
#[derive(Debug)]
pub struct Outcome<T> {
    pub result: T,
    /// The emulator's findings from every launch.
    pub report: LaunchReport,
    /// How many kernel launches it took.
    pub launches: u32,
}

fn invalid(message: String) -> HarnessError {
    HarnessError::Invalid(message)
}

/// The kernels take the length as `unsigned int`.
fn length_u32(len: usize) -> Result<u32> {
    if len > MAX_LEN {
        return Err(invalid(format!(
            "{len} elements is more than these kernels' limit of {MAX_LEN} (32-bit indices, padded to a power of two)"
        )));
    }
    u32::try_from(len).map_err(|_| invalid(format!("{len} elements does not fit in 32 bits")))
}

fn empty<T>(result: T) -> Outcome<T> {
    Outcome {
        result,
        report: LaunchReport::default(),
        launches: 0,
    }
}

/// Launches and waits (`wait`), or only enqueues (for timing); returns the findings.
fn launch(
    device: &mut Device,
    kernel: &KernelSource,
    shape: LaunchShape,
    args: &[Arg<'_>],
    wait: bool,
) -> Result<Vec<Finding>> {
    if wait {
        Ok(device.launch(kernel, shape, args)?.findings)
    } else {
        device
            .launch_async(kernel, shape, args)
            .map(|()| Vec::new())
    }
}

/// The block a one-block variant is launched with by default: `n` rounded up to a warp.
pub fn default_one_block_threads(variant: &Ch6Variant, n: usize) -> u32 {
    let needed = match variant.kind {
        Step::OneBlockExclusive => padded_len(n) / 2,
        _ => n,
    };
    (needed.max(1).div_ceil(32) * 32).min(1024) as u32
}

/// One launch of a one-block variant ([`Step::OneBlockInclusive`] or
/// [`Step::OneBlockExclusive`]) on `input`, with `threads` threads in its one block.
pub fn run_one_block(
    device: &mut Device,
    variant: &Ch6Variant,
    input: &[u32],
    threads: u32,
) -> Result<Outcome<Vec<u32>>> {
    device.ensure_can_run(variant)?;
    let (limit, needed) = match variant.kind {
        Step::OneBlockInclusive => (MAX_ONE_BLOCK_INCLUSIVE, input.len()),
        Step::OneBlockExclusive if variant.expect.is_correct() => {
            (MAX_ONE_BLOCK_EXCLUSIVE, padded_len(input.len()) / 2)
        }
        Step::OneBlockExclusive => (MAX_ONE_BLOCK_EXCLUSIVE, input.len().div_ceil(2)),
        _ => {
            return Err(invalid(format!("{} is not a one-block scan", variant.name)));
        }
    };
    if input.len() > limit {
        return Err(invalid(format!(
            "{} scans at most {limit} elements in one block, not {}",
            variant.name,
            input.len()
        )));
    }
    if (threads as usize) < needed {
        return Err(invalid(format!(
            "{} needs at least {needed} threads for {} elements, not {threads}",
            variant.name,
            input.len()
        )));
    }
    if input.is_empty() {
        return Ok(empty(Vec::new()));
    }
    let n = length_u32(input.len())?;
    let in_buffer = device.upload(input, "in")?;
    let out = device.zeros::<u32>(input.len(), "out")?;
    let report = device.launch(
        &variant.kernel,
        LaunchShape::linear(1, threads),
        &[Arg::from(&in_buffer), Arg::from(&out), Arg::U32(n)],
    )?;
    Ok(Outcome {
        result: device.download(&out)?,
        report,
        launches: 1,
    })
}

/// One launch of [`Step::GridInclusive`] on `⌈n / threads⌉` blocks of `threads`.
pub fn run_grid_inclusive(
    device: &mut Device,
    variant: &Ch6Variant,
    input: &[u32],
    threads: u32,
) -> Result<Outcome<Vec<u32>>> {
    device.ensure_can_run(variant)?;
    if input.is_empty() {
        return Ok(empty(Vec::new()));
    }
    let n = length_u32(input.len())?;
    let blocks = n.div_ceil(threads.max(1));
    let in_buffer = device.upload(input, "in")?;
    let out = device.zeros::<u32>(input.len(), "out")?;
    let report = device.launch(
        &variant.kernel,
        LaunchShape::linear(blocks, threads),
        &[Arg::from(&in_buffer), Arg::from(&out), Arg::U32(n)],
    )?;
    Ok(Outcome {
        result: device.download(&out)?,
        report,
        launches: 1,
    })
}

/// The strides of the multi-launch Blelloch over `m` elements: `2, 4, …, m`.
pub fn strides(m: usize) -> Vec<u32> {
    let mut strides = Vec::new();
    let mut stride = 2usize;
    while stride <= m {
        strides.push(stride as u32);
        stride *= 2;
    }
    strides
}

/// Enqueues (or runs, with `wait`) the up-sweep and down-sweep launches of
/// [`Step::MultiLaunch`] over `data`, whose length is a power of two `m >= 2`.
pub fn multi_launch_sweeps(
    device: &mut Device,
    variant: &Ch6Variant,
    data: &Buffer<u32>,
    threads: u32,
    wait: bool,
) -> Result<(Vec<Finding>, u32)> {
    let Step::MultiLaunch { down_sweep } = variant.kind else {
        return Err(invalid(format!(
            "{} is not a multi-launch scan",
            variant.name
        )));
    };
    let m = data.len();
    if m < 2 || !m.is_power_of_two() {
        return Err(invalid(format!(
            "the sweeps need a power-of-two length of at least 2, not {m}"
        )));
    }
    let m32 = length_u32(m)?;
    let threads = threads.max(1);
    let mut findings = Vec::new();
    let mut launches = 0;
    let levels = strides(m);
    let sweeps = levels
        .iter()
        .map(|&s| (variant.kernel, s))
        .chain(levels.iter().rev().map(|&s| (down_sweep, s)));
    for (kernel, stride) in sweeps {
        let shape = LaunchShape::linear((m32 / stride).div_ceil(threads), threads);
        let args = [Arg::from(data), Arg::U32(m32), Arg::U32(stride)];
        findings.extend(launch(device, &kernel, shape, &args, wait)?);
        launches += 1;
    }
    Ok((findings, launches))
}

/// The exclusive scan of `input` by [`Step::MultiLaunch`]: padded with 0 to a power of two on
/// the host, then `2 · log₂ m` launches, each waited for.
pub fn run_multi_launch(
    device: &mut Device,
    variant: &Ch6Variant,
    input: &[u32],
    threads: u32,
) -> Result<Outcome<Vec<u32>>> {
    device.ensure_can_run(variant)?;
    if input.is_empty() {
        return Ok(empty(Vec::new()));
    }
    length_u32(input.len())?;
    let mut padded = input.to_vec();
    padded.resize(padded_len(input.len()), 0);
    let data = device.upload(&padded, "data")?;
    let (findings, launches) = multi_launch_sweeps(device, variant, &data, threads, true)?;
    let mut result = device.download(&data)?;
    result.truncate(input.len());
    Ok(Outcome {
        result,
        report: LaunchReport {
            findings,
            ..LaunchReport::default()
        },
        launches,
    })
}

/// The two kernels of the large-array scan for one element type.
#[derive(Debug, Clone, Copy)]
pub struct LargeScanKernels {
    pub scan_tiles: KernelSource,
    pub add_offsets: KernelSource,
}

impl LargeScanKernels {
    pub fn u32(variant: &Ch6Variant) -> Result<Self> {
        match variant.kind {
            Step::LargeArray { add_u32, .. } => Ok(Self {
                scan_tiles: variant.kernel,
                add_offsets: add_u32,
            }),
            _ => Err(invalid(format!(
                "{} is not a large-array scan",
                variant.name
            ))),
        }
    }

    pub fn f32(variant: &Ch6Variant) -> Result<Self> {
        match variant.kind {
            Step::LargeArray {
                scan_f32, add_f32, ..
            } => Ok(Self {
                scan_tiles: scan_f32,
                add_offsets: add_f32,
            }),
            _ => Err(invalid(format!(
                "{} is not a large-array scan",
                variant.name
            ))),
        }
    }
}

/// The levels of the large-array scan: `(length, tiles)` of the input, then of its tile sums,
/// and so on until one tile holds everything.
pub fn large_scan_levels(n: usize, threads: u32) -> Vec<(usize, usize)> {
    let tile = 2 * threads.max(1) as usize;
    let mut levels = Vec::new();
    let mut len = n;
    loop {
        let tiles = len.div_ceil(tile).max(1);
        levels.push((len, tiles));
        if tiles == 1 {
            return levels;
        }
        len = tiles;
    }
}

/// Launches of the large-array scan of `n` elements: one tile scan per level, and one add per
/// level that has more than one tile.
pub fn large_scan_launch_count(n: usize, threads: u32) -> u32 {
    let levels = large_scan_levels(n, threads).len() as u32;
    2 * levels - 1
}

/// Tile-sum buffers, one per level, for [`large_scan_enqueue`].
pub fn large_scan_sums<T: Element>(
    device: &mut Device,
    n: usize,
    threads: u32,
) -> Result<Vec<Buffer<T>>> {
    large_scan_levels(n, threads)
        .iter()
        .map(|&(_, tiles)| device.zeros::<T>(tiles, "tile_sums"))
        .collect()
}

/// Runs (or enqueues, for timing) the large-array scan of `input` into `output`; `sums` from
/// [`large_scan_sums`]. Level `k + 1` scans level `k`'s tile sums in place; then, from the top
/// down, each level's tiles get their scanned offsets added.
pub fn large_scan_enqueue<T: Element>(
    device: &mut Device,
    kernels: LargeScanKernels,
    input: &Buffer<T>,
    output: &Buffer<T>,
    sums: &[Buffer<T>],
    threads: u32,
    wait: bool,
) -> Result<(Vec<Finding>, u32)> {
    if !threads.is_power_of_two() || threads > 1024 {
        return Err(invalid(format!(
            "the large-array scan needs a power-of-two block of at most 1024 threads, not {threads}"
        )));
    }
    let levels = large_scan_levels(input.len(), threads);
    if sums.len() != levels.len() {
        return Err(invalid("tile-sum buffers do not match the levels".into()));
    }
    let shared = 2 * threads * std::mem::size_of::<T>() as u32;
    let shape = |tiles: usize| -> Result<LaunchShape> {
        let tiles = u32::try_from(tiles).map_err(|_| invalid(format!("{tiles} tiles")))?;
        Ok(LaunchShape::linear(tiles, threads).with_dynamic_shared(shared))
    };
    let mut findings = Vec::new();
    let mut launches = 0;
    for (k, &(len, tiles)) in levels.iter().enumerate() {
        let (from, to) = if k == 0 {
            (input, output)
        } else {
            (&sums[k - 1], &sums[k - 1])
        };
        let args = [
            Arg::from(from),
            Arg::from(to),
            Arg::from(&sums[k]),
            Arg::U32(length_u32(len)?),
        ];
        findings.extend(launch(
            device,
            &kernels.scan_tiles,
            shape(tiles)?,
            &args,
            wait,
        )?);
        launches += 1;
    }
    for (k, &(len, tiles)) in levels.iter().enumerate().rev() {
        if tiles == 1 {
            continue;
        }
        let data = if k == 0 { output } else { &sums[k - 1] };
        let args = [
            Arg::from(data),
            Arg::from(&sums[k]),
            Arg::U32(length_u32(len)?),
        ];
        findings.extend(launch(
            device,
            &kernels.add_offsets,
            shape(tiles)?,
            &args,
            wait,
        )?);
        launches += 1;
    }
    Ok((findings, launches))
}

/// The exclusive scan of `input` by the large-array scan, each launch waited for.
pub fn run_large_scan<T: Element>(
    device: &mut Device,
    variant: &Ch6Variant,
    kernels: LargeScanKernels,
    input: &[T],
    threads: u32,
) -> Result<Outcome<Vec<T>>> {
    device.ensure_can_run(variant)?;
    if input.is_empty() {
        return Ok(empty(Vec::new()));
    }
    length_u32(input.len())?;
    let in_buffer = device.upload(input, "in")?;
    let out = device.zeros::<T>(input.len(), "out")?;
    let sums = large_scan_sums::<T>(device, input.len(), threads)?;
    let (findings, launches) =
        large_scan_enqueue(device, kernels, &in_buffer, &out, &sums, threads, true)?;
    Ok(Outcome {
        result: device.download(&out)?,
        report: LaunchReport {
            findings,
            ..LaunchReport::default()
        },
        launches,
    })
}

/// Depth of the additions behind any one output of the large-array scan of `n` elements: at
/// each level a value passes at most `log₂ tile` up-sweep and `log₂ tile` down-sweep additions,
/// plus one for the offset added to its tile. The rounding bound of element `i` is
/// `γ_depth · Σ_{j<i} |x_j|` (Higham §4.2), see [`harness::verify::bounds`].
pub fn large_scan_depth(n: usize, threads: u32) -> u64 {
    let tile_depth = harness::verify::bounds::tree_depth(2 * u64::from(threads.max(1)));
    large_scan_levels(n, threads).len() as u64 * (2 * tile_depth + 1)
}

/// The buffers the climb's tile scans use besides input and output, for `tiles` tiles.
#[derive(Debug)]
pub struct TileScanBuffers {
    /// The reduce-then-scan's tile sums, scanned in place into tile offsets.
    pub tile_sums: Buffer<u32>,
    /// The single pass's next tile number.
    pub tile_counter: Buffer<u32>,
    pub flags: Buffer<u32>,
    pub aggregates: Buffer<u32>,
    pub inclusive_prefixes: Buffer<u32>,
    pub status: Buffer<u64>,
}

impl TileScanBuffers {
    pub fn new(device: &mut Device, tiles: usize) -> Result<Self> {
        let tiles = tiles.max(1);
        Ok(Self {
            tile_sums: device.zeros(tiles, "tile_sums")?,
            tile_counter: device.zeros(1, "tile_counter")?,
            flags: device.zeros(tiles, "flags")?,
            aggregates: device.zeros(tiles, "aggregates")?,
            inclusive_prefixes: device.zeros(tiles, "inclusive_prefixes")?,
            status: device.zeros(tiles, "status")?,
        })
    }
}

/// `variant`'s tiles over `n` elements with `threads` per block.
pub fn tile_count(variant: &Ch6Variant, n: usize, threads: u32) -> usize {
    n.div_ceil(tile_len(variant, threads.max(1)))
}

/// Refuses blocks the climb's tile scans cannot run: whole warps, at most what the kernel's
/// launch bounds allow.
pub fn check_tile_threads(variant: &Ch6Variant, threads: u32) -> Result<()> {
    let most = max_tile_threads(variant);
    if threads == 0 || !threads.is_multiple_of(32) || threads > most {
        return Err(invalid(format!(
            "{} needs a block of whole warps, 32 to {most} threads (its scans are warp shuffles and its launch bounds allow {most}), not {threads}",
            variant.name
        )));
    }
    Ok(())
}

/// Runs (`wait`) or only enqueues (for timing) the climb's scan of `input` (length `n`) into
/// `output`: the reduce-then-scan's three launches, or a single pass after zeroing its tile
/// counter and published state (the zeroing is part of what is timed). Returns the findings
/// and the number of kernel launches.
pub fn tile_scan_enqueue(
    device: &mut Device,
    variant: &Ch6Variant,
    input: &Buffer<u32>,
    output: &Buffer<u32>,
    threads: u32,
    buffers: &mut TileScanBuffers,
    wait: bool,
) -> Result<(Vec<Finding>, u32)> {
    check_tile_threads(variant, threads)?;
    let n = input.len();
    let n32 = length_u32(n)?;
    let tiles = tile_count(variant, n, threads);
    if tiles == 0 {
        return Ok((Vec::new(), 0));
    }
    let tiles32 = u32::try_from(tiles).map_err(|_| invalid(format!("{tiles} tiles")))?;
    let plain = LaunchShape::linear(tiles32, threads);
    let shared = plain.with_dynamic_shared(tile_shared_bytes(tile_items(variant), threads));
    match variant.kind {
        Step::ReduceThenScan {
            scan_sums,
            scan_tiles,
            coalesced,
        } => {
            let storing = |shape: LaunchShape| {
                if coalesced {
                    shape.with_dynamic_shared(tile_shared_bytes(TILE_ITEMS, threads))
                } else {
                    shape
                }
            };
            let mut findings = launch(
                device,
                &variant.kernel,
                plain,
                &[
                    Arg::from(input),
                    Arg::U32(n32),
                    Arg::from(&buffers.tile_sums),
                ],
                wait,
            )?;
            findings.extend(launch(
                device,
                &scan_sums,
                storing(LaunchShape::linear(1, threads)),
                &[Arg::from(&buffers.tile_sums), Arg::U32(tiles32)],
                wait,
            )?);
            findings.extend(launch(
                device,
                &scan_tiles,
                storing(plain),
                &[
                    Arg::from(input),
                    Arg::from(output),
                    Arg::U32(n32),
                    Arg::from(&buffers.tile_sums),
                ],
                wait,
            )?);
            Ok((findings, 3))
        }
        Step::SinglePass { state, .. } => {
            device.clear(&mut buffers.tile_counter)?;
            let mut args = vec![
                Arg::from(input),
                Arg::from(output),
                Arg::U32(n32),
                Arg::from(&buffers.tile_counter),
            ];
            match state {
                PassState::Chained => {
                    device.clear(&mut buffers.flags)?;
                    args.extend([
                        Arg::from(&buffers.flags),
                        Arg::from(&buffers.inclusive_prefixes),
                    ]);
                }
                PassState::LookBack => {
                    device.clear(&mut buffers.flags)?;
                    args.extend([
                        Arg::from(&buffers.flags),
                        Arg::from(&buffers.aggregates),
                        Arg::from(&buffers.inclusive_prefixes),
                    ]);
                }
                PassState::PackedStatus => {
                    device.clear(&mut buffers.status)?;
                    args.push(Arg::from(&buffers.status));
                }
            }
            Ok((launch(device, &variant.kernel, shared, &args, wait)?, 1))
        }
        _ => Err(invalid(format!(
            "{} is not one of the climb's tile scans",
            variant.name
        ))),
    }
}

/// The exclusive scan of `input` by one of the climb's tile scans, with `threads` per block.
pub fn run_tile_scan(
    device: &mut Device,
    variant: &Ch6Variant,
    input: &[u32],
    threads: u32,
) -> Result<Outcome<Vec<u32>>> {
    device.ensure_can_run(variant)?;
    check_tile_threads(variant, threads)?;
    if input.is_empty() {
        return Ok(empty(Vec::new()));
    }
    length_u32(input.len())?;
    let in_buffer = device.upload(input, "in")?;
    let out = device.zeros::<u32>(input.len(), "out")?;
    let mut buffers = TileScanBuffers::new(device, tile_count(variant, input.len(), threads))?;
    let (findings, launches) = tile_scan_enqueue(
        device,
        variant,
        &in_buffer,
        &out,
        threads,
        &mut buffers,
        true,
    )?;
    Ok(Outcome {
        result: device.download(&out)?,
        report: LaunchReport {
            findings,
            ..LaunchReport::default()
        },
        launches,
    })
}

/// Inclusive ⇄ exclusive with [`Step::Convert`]: returns `(exclusive from inclusive, inclusive
/// from exclusive and the input)`, each one launch of `⌈n / threads⌉` blocks.
pub fn run_convert(
    device: &mut Device,
    variant: &Ch6Variant,
    input: &[u32],
    inclusive: &[u32],
    exclusive: &[u32],
    threads: u32,
) -> Result<Outcome<(Vec<u32>, Vec<u32>)>> {
    device.ensure_can_run(variant)?;
    let Step::Convert { to_inclusive } = variant.kind else {
        return Err(invalid(format!("{} is not a conversion", variant.name)));
    };
    if inclusive.len() != input.len() || exclusive.len() != input.len() {
        return Err(invalid("the scans must be as long as the input".into()));
    }
    if input.is_empty() {
        return Ok(empty((Vec::new(), Vec::new())));
    }
    let n = length_u32(input.len())?;
    let shape = LaunchShape::linear(n.div_ceil(threads.max(1)), threads);
    let in_buffer = device.upload(input, "in")?;
    let inclusive_buffer = device.upload(inclusive, "inclusive")?;
    let exclusive_buffer = device.upload(exclusive, "exclusive")?;
    let to_exclusive_out = device.zeros::<u32>(input.len(), "exclusive_out")?;
    let to_inclusive_out = device.zeros::<u32>(input.len(), "inclusive_out")?;
    let mut findings = device
        .launch(
            &variant.kernel,
            shape,
            &[
                Arg::from(&inclusive_buffer),
                Arg::from(&to_exclusive_out),
                Arg::U32(n),
            ],
        )?
        .findings;
    findings.extend(
        device
            .launch(
                &to_inclusive,
                shape,
                &[
                    Arg::from(&exclusive_buffer),
                    Arg::from(&in_buffer),
                    Arg::from(&to_inclusive_out),
                    Arg::U32(n),
                ],
            )?
            .findings,
    );
    Ok(Outcome {
        result: (
            device.download(&to_exclusive_out)?,
            device.download(&to_inclusive_out)?,
        ),
        report: LaunchReport {
            findings,
            ..LaunchReport::default()
        },
        launches: 2,
    })
}

/// Tries to compile and launch a [`Step::DoesNotCompile`] variant; the error NVRTC gave (on
/// the emulator without NVRTC, the log committed in its `.ptx` file).
pub fn compile_error(device: &mut Device, variant: &Ch6Variant) -> Result<HarnessError> {
    let x = device.zeros::<i32>(4, "x")?;
    match device.launch(
        &variant.kernel,
        LaunchShape::linear(1, 2),
        &[Arg::from(&x), Arg::I32(0), Arg::I32(4)],
    ) {
        Err(error @ HarnessError::Compile { .. }) => Ok(error),
        Err(other) => Err(other),
        Ok(_) => Err(invalid(format!(
            "{} compiled, but it is meant not to",
            variant.kernel.path
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn references_agree_on_a_known_input() {
        let x = [3, 1, 7, 0, 4, 1, 6, 3];
        assert_eq!(inclusive_scan(&x), vec![3, 4, 11, 11, 15, 16, 22, 25]);
        assert_eq!(exclusive_scan(&x), vec![0, 3, 4, 11, 11, 15, 16, 22]);
        assert_eq!(inclusive_scan(&[u32::MAX, 2]), vec![u32::MAX, 1]);
        assert_eq!(hillis_steele_counted(&x).0, inclusive_scan(&x));
        assert_eq!(blelloch_counted(&x).0, exclusive_scan(&x));
        assert_eq!(exclusive_scan_f64(&[1.0, 2.0, -4.0]), vec![0.0, 1.0, 3.0]);
        assert_eq!(exclusive_abs_sums(&[1.0, -2.0, 4.0]), vec![0.0, 1.0, 3.0]);
    }

    #[test]
    fn the_scan_on_every_core_is_the_serial_scan() {
        // pieces of 2^20, values that wrap around: the offsets must wrap as the serial sum does
        let x: Vec<u32> = (0..(3 << 20) + 5)
            .map(|i: u32| i.wrapping_mul(2_654_435_761))
            .collect();
        assert_eq!(exclusive_scan_on_every_core(&x), exclusive_scan(&x));
        assert_eq!(
            exclusive_scan_on_every_core(&x[..7]),
            exclusive_scan(&x[..7])
        );
        assert!(exclusive_scan_on_every_core(&[]).is_empty());
    }

    #[test]
    fn the_seed_exercise_counts_for_32() {
        let x = vec![1; 32];
        let (_, naive) = hillis_steele_counted(&x);
        let (_, efficient) = blelloch_counted(&x);
        assert_eq!(
            naive,
            WorkSpan {
                additions: 31 + 30 + 28 + 24 + 16,
                steps: 5
            }
        );
        assert_eq!(
            efficient,
            WorkSpan {
                additions: 62,
                steps: 10
            }
        );
    }

    #[test]
    fn levels_and_bank_conflicts() {
        assert_eq!(up_sweep_levels(4), vec![vec![(0, 1), (2, 3)], vec![(1, 3)]]);
        assert_eq!(strides(8), vec![2, 4, 8]);
        assert_eq!(
            large_scan_levels(1 << 28, 512),
            vec![(1 << 28, 1 << 18), (1 << 18, 1 << 8), (1 << 8, 1)]
        );
        assert_eq!(large_scan_launch_count(1 << 28, 512), 5);
        assert_eq!(large_scan_launch_count(5, 512), 1);
        let banks = up_sweep_bank_conflicts(2048);
        assert_eq!(banks[0].ways, 2);
        assert_eq!(banks[4].ways, 32);
        assert_eq!(banks.last().map(|b| b.ways), Some(1));
        assert_eq!(banks.iter().map(|b| b.padded_ways).max(), Some(2));
        assert_eq!(banks[4].padded_ways, 1);
    }
}
