//! Chapter 6: scans.

use ch6_scans::testing::{
    climb_threads, length, one_block_case, tile_threads, values, values_kind,
};
use ch6_scans::{
    Ch6Variant, LargeScanKernels, MAX_ONE_BLOCK_EXCLUSIVE, MAX_ONE_BLOCK_INCLUSIVE, Step, compact,
    exclusive_scan, inclusive_scan, run_grid_inclusive, run_large_scan, run_multi_launch,
    run_one_block, run_tile_scan, variant,
};
use harness::verify::compare_exact;
use harness::{Device, Expect, Variant};
use proptest::prelude::*;

use super::{as_variant, fix_it, write_it};
use crate::check::{Check, Failure};
use crate::exercise::{Exercise, Fails};
use crate::goal::{self, Outcome};
use crate::program::Program;
use crate::property::{self, Budget, Observed, excerpt, first_index, wrong_from};

/// The statement the three look-back exercises share; each adds a sentence on its own slip.
macro_rules! look_back_launch {
    () => {
        "An exclusive scan in one launch, decoupled look-back: each block claims the next tile \
        of 16 · blockDim elements from tile_counter, sums it, publishes the sum as an \
        aggregate, walks back over its predecessors' published aggregates until one has \
        published its inclusive prefix, then publishes its own prefix and writes its tile. The \
        host launches ⌈n / (16 · blockDim)⌉ blocks of 32 to 512 threads (whole warps) with \
        blockDim / 32 · 528 · 4 bytes of dynamic shared memory, after zeroing tile_counter and \
        flags."
    };
}

pub(super) fn exercises() -> Vec<Exercise> {
    vec![
        Exercise {
            title: "One buffer, read and written",
            statement: "An inclusive scan in one block of at least n threads (n ≤ 1024), \
                Hillis–Steele: at the step of offset k every element adds the one k before \
                it. With one buffer, a thread may read the element k before it after that \
                element's own thread already added to it in this step. A GPU usually hides \
                this; racecheck does not.",
            hints: &[
                "Racecheck names the addition. In one step, which thread writes \
                 sum_buf[tid - iter], and is anything ordering that write after your read?",
                "Read from one buffer and write to another, swapping them each step (two \
                 shared arrays, or one of 2 × 1024 with an index that flips), with \
                 __syncthreads() after each step.",
            ],
            taught: "A step that reads values other threads overwrite in the same step needs \
                two buffers (or a barrier between the read and the write). Results that look \
                right on a GPU prove nothing about a race.",
            ..fix_it(
                variant("hillis-steele-single-buffer"),
                variant("hillis-steele-double-buffer"),
                OneBlockScan { exclusive: false },
                Fails::at_bug(Expect::Race),
            )
        },
        Exercise {
            title: "A down-sweep that does not compile",
            statement: "The down-sweep of a Blelloch scan as it was printed, and NVRTC refuses \
                it. Make it compile, then make it the down-sweep the host launches: it pads \
                the input with zeros to a power of two m, runs the chapter's up-sweep, then \
                launches down_sweep(unsigned int *data, unsigned int m, unsigned int stride) \
                once per level with stride = m, m / 2, …, 2, on enough threads that thread k \
                can handle the pair ending at element (k + 1) · stride − 1. The up-sweep \
                leaves the total in data[m − 1]: the first level (stride = m) clears it, as \
                the printed kernel meant to. The result must be the exclusive scan.",
            hints: &[
                "NVRTC names two lines: a second declaration of j, and a tid that was never \
                 declared.",
                "Use the host's parameters: thread k of the grid takes pair k of this level \
                 when k < m / stride. Its right element ends pair k (the last of its stride \
                 elements), its left one lies half a stride before.",
                "At the first level (stride == m) treat data[right] as 0, the identity. Then \
                 the down-sweep's swap: left takes right's value, and right adds left's old \
                 value, kept in a register before the swap overwrites it.",
            ],
            taught: "Compile errors are the cheapest bugs: NVRTC names the line. The launch \
                boundary between levels is the barrier a multi-block sweep needs, so each \
                level only has to get one pair per thread right.",
            ..fix_it(
                variant("down-sweep-does-not-compile"),
                variant("blelloch-multi-launch"),
                DownSweep,
                Fails::at_bug(Expect::CompileError),
            )
        },
        Exercise {
            title: "Blelloch without padding",
            statement: "An exclusive scan in one block's shared memory, Blelloch: an \
                up-sweep builds a tree of partial sums, the root is cleared, a down-sweep \
                hands sums back down. Here the tree is built over n itself. The host launches \
                one block of at least (n rounded up to a power of two) / 2 threads, n ≤ 2048. \
                Right for powers of two, wrong for any other n.",
            hints: &[
                "Draw the levels for n = 6: which pairs does each level combine, and does the \
                 last element's sum ever reach the root?",
                "Run the tree over m, n rounded up to a power of two: load in[i] for i < n \
                 and 0 (the identity) for n <= i < m, sweep over m, write back the first n.",
            ],
            taught: "Tree algorithms assume a power of two; pad with the operation's identity \
                (0 for a sum) rather than bending the tree to fit.",
            ..fix_it(
                variant("blelloch-no-padding"),
                variant("blelloch-shared"),
                OneBlockScan { exclusive: true },
                Fails::wrong_result(),
            )
        },
        Exercise {
            title: "A scan across blocks",
            statement: "An inclusive scan of n > 1024 on ⌈n / blockDim⌉ blocks: each block \
                scans its own tile in shared memory and nothing adds the tiles before it. One \
                launch cannot wait for other blocks. The host can run a scan in levels \
                instead, if this file defines scan_tiles_u32(const unsigned int *in, \
                unsigned int *out, unsigned int *tile_sums, unsigned int n) and \
                add_tile_offsets_u32(unsigned int *data, const unsigned int *tile_offsets, \
                unsigned int n): blocks of a power of two T threads, 2T elements per tile, \
                2T · 4 bytes of dynamic shared memory. scan_tiles writes each tile's \
                exclusive scan to out and the tile's total to tile_sums[blockIdx.x]; the host \
                scans tile_sums the same way, then add_tile_offsets adds tile b's offset to \
                its 2T elements. The levels make an exclusive scan.",
            hints: &[
                "Until the file defines scan_tiles_u32 the host runs hillis_steele_multi_block \
                 in one launch, and block 1's first element misses block 0's sum; once it \
                 does, the host runs the levels and the old kernel may stay or go.",
                "scan_tiles_u32 is blelloch-shared on one tile: load 2T elements (0 past n) \
                 into extern __shared__ memory, up-sweep, save the root to tile_sums, clear \
                 it, down-sweep, write back.",
                "add_tile_offsets_u32: element i of tile b = blockIdx.x gets data[i] += \
                 tile_offsets[b], for both elements a thread owns, if i < n.",
            ],
            taught: "Blocks cannot wait for each other inside a launch. A scan of any length \
                splits into independent tile scans, a (recursive) scan of the tile totals, and \
                a uniform add: three passes whose launch boundaries order them.",
            ..fix_it(
                variant("hillis-steele-multi-block"),
                variant("large-array-scan"),
                GridScan,
                Fails::wrong_result(),
            )
        },
        Exercise {
            title: "A flag with nothing behind it",
            statement: concat!(
                look_back_launch!(),
                " One of the hand-offs between blocks is wrong: a block that sees a \
                predecessor's flag is not sure to see the value it announces."
            ),
            hints: &[
                "Racecheck pairs a write of a published value with a read of it in another \
                 block. What orders that write before the flag the reader waited for?",
                "A volatile store of the flag releases only what a __threadfence() before it \
                 made visible: value, fence, then flag.",
            ],
            taught: "Publishing to other blocks takes a release: the data, a fence, then the \
                flag. Without the fence the flag can arrive first, and the reader's own fence \
                cannot fix that.",
            ..fix_it(
                variant("lookback-no-fence"),
                variant("decoupled-lookback"),
                LookBackScan,
                Fails::at_bug(Expect::Race),
            )
        },
        Exercise {
            title: "The flag before the value",
            statement: concat!(
                look_back_launch!(),
                " A hand-off between blocks is wrong again, another way than in \
                lookback-no-fence: the publishing block has its fence, in the wrong place."
            ),
            hints: &[
                "Racecheck names the value's write. When a reader sees the flag, is that \
                 write already visible to it? Written first is not enough: only a fence \
                 between the value and the flag makes the reader that sees the flag see the \
                 value too.",
                "A fence orders what comes before it before what comes after it: write the \
                 value, fence, and only then set the flag.",
            ],
            taught: "A flag announces data that is already there. A fence in the wrong place \
                orders the wrong things: the order of the writes is the protocol.",
            ..fix_it(
                variant("lookback-flag-before-data"),
                variant("decoupled-lookback"),
                LookBackScan,
                Fails::at_bug(Expect::Race),
            )
        },
        Exercise {
            title: "Seeing the flag is not enough",
            statement: concat!(
                look_back_launch!(),
                " This time a block publishes as it should (the value, a fence, the flag); \
                the slip is on the side of the block that waits for the flag."
            ),
            hints: &[
                "Racecheck names the read of a predecessor's value. The writer fenced before \
                 its flag; what did the reader do between seeing the flag and reading?",
                "Add a __threadfence() after the loop that waits for the flag, before the \
                 value is read: the acquire half of the hand-off.",
            ],
            taught: "A hand-off has two halves: the writer's fence before the flag (release) \
                and the reader's fence after seeing it (acquire). Without the second, the \
                read may be served from a cache line older than the flag.",
            ..fix_it(
                variant("lookback-no-acquire"),
                variant("decoupled-lookback"),
                LookBackScan,
                Fails::at_bug(Expect::Race),
            )
        },
        Exercise {
            title: "Blelloch without bank conflicts",
            statement: "Write blelloch_shared_conflict_free: the exclusive scan of \
                blelloch-shared (one block, padded to a power of two m, an up-sweep, the root \
                cleared, a down-sweep), with every shared index i stored at i + \
                CONFLICT_FREE_OFFSET(i), one spare word per 32, and temp sized to match. The \
                host launches one block of at least m / 2 threads, n <= 2048. The goal beyond a \
                right scan: no shared access worse than 2-way bank conflicts, where the \
                unpadded tree has 32-way (the emulator counts them on 2048 elements).",
            hints: &[
                "Copy blelloch-shared's body and add CONFLICT_FREE_OFFSET(i) to every index of \
                 temp: the loads, ai and bi in both sweeps, the root m - 1, the stores back.",
                "In the down-sweep, pad ai and bi once, before t = temp[ai]; temp[ai] = \
                 temp[bi]; temp[bi] += t; and declare temp[MAX_N + CONFLICT_FREE_OFFSET(MAX_N)].",
            ],
            taught: "Shared memory is 32 banks of 4-byte words; a warp whose lanes touch \
                different words of one bank waits for each in turn. A tree's strides are \
                powers of two, the worst case; one word of padding per 32 shifts every 32nd \
                element into the next bank. The emulator counts what Nsight Compute would \
                measure on a GPU.",
            ..write_it(
                variant("blelloch-shared-conflict-free"),
                "the exclusive scan of blelloch-shared, every index i of temp padded to i + CONFLICT_FREE_OFFSET(i)",
                ConflictFreeScan,
            )
        },
        Exercise {
            title: "Compaction from a scan",
            statement: "Keep the nonzero values of in, in order, with no gaps. count_tiles \
                (given) counts the keepers of each tile of blockDim elements; the host scans \
                the counts with the chapter's large-array scan into tile_offsets (where each \
                tile's keepers start in out) and allocates out with room for exactly the \
                keepers. Write compact_tiles(const unsigned int *in, unsigned int n, const \
                unsigned int *tile_offsets, unsigned int *out): each thread's element is a \
                keeper if i < n and in[i] != 0; an inclusive scan of the keep flags in shared \
                memory gives each keeper its rank in the tile. Blocks of 1 to 1024 threads, \
                ⌈n / blockDim⌉ of them.",
            hints: &[
                "This is hillis-steele-double-buffer on the flags: __shared__ unsigned int \
                 ranks[2][MAX_THREADS], ranks[0][tid] = keep, then for offset = 1, 2, 4, … < \
                 blockDim.x: __syncthreads(), add the value offset before (if tid >= offset) \
                 into the other buffer, and swap.",
                "After the loop the current buffer holds, at tid, the number of keepers among \
                 threads 0..tid of the tile: a keeper's rank is that minus one.",
                "Only a keeper writes: its value of in goes to out at its tile's offset \
                 (tile_offsets of its block) plus its rank.",
            ],
            taught: "A scan turns \"how many before me\" into addresses: compaction, radix \
                sort's scatter and allocation on a GPU all work this way. Two levels, a scan \
                inside each tile and a scan of the tiles' counts, cover any length.",
            ..write_it(
                compact::variant("compact-tiles"),
                "rank this thread's keeper among its tile's by scanning the keep flags in shared memory, then write it at tile_offsets[blockIdx.x] + rank",
                Compaction,
            )
        },
    ]
}

/// The one-block exclusive scan of `blelloch-shared-conflict-free`'s signature, then its
/// goal: at most 2-way bank conflicts on 2048 elements.
struct ConflictFreeScan;

impl Check for ConflictFreeScan {
    fn run(&self, program: &Program, device: &mut Device, budget: &Budget) -> Result<u32, Failure> {
        let fixed = variant("blelloch-shared-conflict-free");
        let yours = as_variant(program.kernel(&fixed.kernel)?, fixed);
        let strategy = (
            one_block_case(MAX_ONE_BLOCK_EXCLUSIVE, true),
            values_kind(),
            any::<u64>(),
        );
        property::run(
            device,
            budget,
            strategy,
            |device, &((n, threads), kind, seed)| {
                let x = values(n, kind, seed);
                let result = run_one_block(device, &yours, &x, threads)
                    .map(|outcome| (outcome.result, outcome.report));
                let seen = Observed::new().launch(harness::LaunchShape::linear(1, threads));
                scan_case(n, &x, result, exclusive_scan(&x), seen, "out")
            },
        )
    }

    fn goals(&self, program: &Program, device: &mut Device) -> Result<Vec<Outcome>, Failure> {
        let fixed = variant("blelloch-shared-conflict-free");
        let yours = as_variant(program.kernel(&fixed.kernel)?, fixed);
        let x = values(
            MAX_ONE_BLOCK_EXCLUSIVE,
            ch6_scans::testing::Values::Small,
            1,
        );
        let case = format!("n = {MAX_ONE_BLOCK_EXCLUSIVE}, 1 block × 1024 threads");
        let banks = goal::banks(device, program, 2, &case, |device| {
            run_one_block(device, &yours, &x, 1024)
                .map(|outcome| vec![outcome.report])
                .map_err(|error| Failure::Setup(error.to_string()))
        })?;
        Ok(vec![banks])
    }
}

/// `compact_tiles(in, n, tile_offsets, out)` after the chapter's count and scan, on blocks of
/// 1 to 1024 threads (256 on the emulator), compared value for value with the CPU's.
struct Compaction;

impl Check for Compaction {
    fn run(&self, program: &Program, device: &mut Device, budget: &Budget) -> Result<u32, Failure> {
        let fixed = compact::variant("compact-tiles");
        let yours = as_variant(program.kernel(&fixed.kernel)?, fixed);
        let cap = budget.size(3_000, 4_000_000);
        let on_gpu = budget.on_gpu;
        let threads = prop_oneof![
            prop::sample::select(vec![32u32, 64, 256, 1024]),
            1u32..=1024
        ]
        .prop_map(move |t| if on_gpu { t } else { t.min(256) });
        let zeros = prop_oneof![Just(0.0), Just(1.0), 0.0f64..1.0];
        let strategy = (
            length(cap).prop_filter("within the budget", move |&n| n <= cap),
            zeros,
            any::<u64>(),
            threads,
        );
        property::run(
            device,
            budget,
            strategy,
            |device, &(n, zeros, seed, threads)| {
                let x = compact::values(n, zeros, seed);
                let result = compact::run(device, &yours, &x, threads)
                    .map(|outcome| (outcome.result, outcome.report));
                let seen = Observed::new()
                    .fact("threads per block", threads)
                    .fact("zeros", format!("{:.0}% of the values", zeros * 100.0));
                scan_case(n, &x, result, compact::compact_cpu(&x), seen, "out")
            },
        )
    }
}

fn scan_case(
    n: usize,
    x: &[u32],
    result: harness::Result<(Vec<u32>, harness::LaunchReport)>,
    want: Vec<u32>,
    seen: Observed,
    output: &str,
) -> Observed {
    let seen = seen.fact("n", n);
    match result {
        Err(error) => seen.fact("in", excerpt(x, None)).error(error),
        Ok((got, report)) => {
            let comparison = compare_exact(&got, &want);
            seen.fact("in", excerpt(x, first_index(&comparison)))
                .reported(report)
                .wrong(wrong_from(output, &comparison))
        }
    }
}

/// `kernel(const unsigned *in, unsigned *out, unsigned n)` in one block: inclusive with at
/// least n threads, or exclusive with at least m / 2 (m: n rounded up to a power of two).
struct OneBlockScan {
    exclusive: bool,
}

impl Check for OneBlockScan {
    fn run(&self, program: &Program, device: &mut Device, budget: &Budget) -> Result<u32, Failure> {
        let (fixed, limit) = if self.exclusive {
            (variant("blelloch-shared"), MAX_ONE_BLOCK_EXCLUSIVE)
        } else {
            (
                variant("hillis-steele-double-buffer"),
                MAX_ONE_BLOCK_INCLUSIVE,
            )
        };
        let yours = as_variant(program.kernel(&fixed.kernel)?, fixed);
        let exclusive = self.exclusive;
        let strategy = (
            one_block_case(limit, exclusive),
            values_kind(),
            any::<u64>(),
        );
        property::run(
            device,
            budget,
            strategy,
            |device, &((n, threads), kind, seed)| {
                let x = values(n, kind, seed);
                let want = if exclusive {
                    exclusive_scan(&x)
                } else {
                    inclusive_scan(&x)
                };
                let result = run_one_block(device, &yours, &x, threads)
                    .map(|outcome| (outcome.result, outcome.report));
                let seen = Observed::new().launch(harness::LaunchShape::linear(1, threads));
                scan_case(n, &x, result, want, seen, "out")
            },
        )
    }
}

/// The chapter's up-sweep, then the learner's `down_sweep(data, m, stride)` per level.
struct DownSweep;

impl Check for DownSweep {
    fn run(&self, program: &Program, device: &mut Device, budget: &Budget) -> Result<u32, Failure> {
        let multi = variant("blelloch-multi-launch");
        let Step::MultiLaunch { down_sweep } = multi.kind else {
            return Err(Failure::Setup(
                "blelloch-multi-launch is no longer a multi-launch scan".into(),
            ));
        };
        let down = program.kernel_named(["down_sweep", "blelloch_down_sweep"], &down_sweep)?;
        let yours: Ch6Variant = Variant {
            name: "your down-sweep",
            kernel: multi.kernel,
            expect: Expect::Correct,
            summary: "",
            kind: Step::MultiLaunch { down_sweep: down },
        };
        let data = crate::program::param_name(&down, 0).unwrap_or_else(|| "data".into());
        let cap = budget.size(2_000, 3_000_000);
        let threads = prop_oneof![prop::sample::select(vec![32u32, 256, 1024]), 1u32..=1024];
        let strategy = (
            length(cap).prop_filter("within the budget", move |&n| n <= cap),
            values_kind(),
            any::<u64>(),
            threads,
        );
        property::run(
            device,
            budget,
            strategy,
            |device, &(n, kind, seed, threads)| {
                let x = values(n, kind, seed);
                let result = run_multi_launch(device, &yours, &x, threads)
                    .map(|outcome| (outcome.result, outcome.report));
                let seen = Observed::new().fact("threads per block", threads);
                // run_multi_launch scans the host's `data` in place, which is your
                // down-sweep's first parameter
                scan_case(n, &x, result, exclusive_scan(&x), seen, &data)
            },
        )
    }
}

/// `hillis_steele_multi_block` in one launch (inclusive), or `scan_tiles_u32` and
/// `add_tile_offsets_u32` in levels (exclusive), whichever the file defines.
struct GridScan;

impl Check for GridScan {
    fn run(&self, program: &Program, device: &mut Device, budget: &Budget) -> Result<u32, Failure> {
        let large = variant("large-array-scan");
        let Step::LargeArray {
            add_u32,
            scan_f32,
            add_f32,
        } = large.kind
        else {
            return Err(Failure::Setup(
                "large-array-scan is no longer a large-array scan".into(),
            ));
        };
        let cap = budget.size(5_000, 20_000_000);
        let lengths = length(cap).prop_map(move |n| n.min(cap));
        if program.defines("scan_tiles_u32").is_none() {
            let multi = variant("hillis-steele-multi-block");
            let yours = as_variant(
                program.kernel_named(["hillis_steele_multi_block"], &multi.kernel)?,
                multi,
            );
            let strategy = (
                lengths,
                prop::sample::select(vec![32u32, 256, 1024]),
                any::<u64>(),
            );
            return property::run(device, budget, strategy, |device, &(n, threads, seed)| {
                let x = values(n, ch6_scans::testing::Values::Small, seed);
                let result = run_grid_inclusive(device, &yours, &x, threads)
                    .map(|outcome| (outcome.result, outcome.report));
                let seen = Observed::new().fact("threads per block", threads);
                scan_case(n, &x, result, inclusive_scan(&x), seen, "out")
            });
        }
        let scan = program.kernel_named(["scan_tiles_u32"], &large.kernel)?;
        let add = program.kernel_named(["add_tile_offsets_u32"], &add_u32)?;
        let yours: Ch6Variant = Variant {
            name: "your scan",
            kernel: scan,
            expect: Expect::Correct,
            summary: "",
            kind: Step::LargeArray {
                add_u32: add,
                scan_f32,
                add_f32,
            },
        };
        let kernels = LargeScanKernels::u32(&yours).map_err(|e| Failure::Setup(e.to_string()))?;
        let strategy = (lengths, values_kind(), any::<u64>(), tile_threads());
        property::run(
            device,
            budget,
            strategy,
            |device, &(n, kind, seed, threads)| {
                let x = values(n, kind, seed);
                let result = run_large_scan(device, &yours, kernels, &x, threads)
                    .map(|outcome| (outcome.result, outcome.report));
                let seen = Observed::new().fact("threads per block", threads);
                scan_case(n, &x, result, exclusive_scan(&x), seen, "out")
            },
        )
    }
}

/// The decoupled look-back's single pass, `kernel(in, out, n, tile_counter, flags, aggregates,
/// inclusive_prefixes)`, on blocks of whole warps.
struct LookBackScan;

impl Check for LookBackScan {
    fn run(&self, program: &Program, device: &mut Device, budget: &Budget) -> Result<u32, Failure> {
        let fixed = variant("decoupled-lookback");
        let yours = as_variant(program.kernel(&fixed.kernel)?, fixed);
        let cap = budget.size(20_000, 20_000_000);
        let strategy = (
            length(cap).prop_filter("within the budget", move |&n| n <= cap),
            values_kind(),
            any::<u64>(),
            climb_threads(),
        );
        property::run(
            device,
            budget,
            strategy,
            |device, &(n, kind, seed, threads)| {
                // At least three tiles, so every case has blocks that look back at others.
                let n = n.max(3 * ch6_scans::tile_len(&yours, threads));
                let x = values(n, kind, seed);
                let result = run_tile_scan(device, &yours, &x, threads)
                    .map(|outcome| (outcome.result, outcome.report));
                let seen = Observed::new().fact("threads per block", threads);
                scan_case(n, &x, result, exclusive_scan(&x), seen, "out")
            },
        )
    }
}
