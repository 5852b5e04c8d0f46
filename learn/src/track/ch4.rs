//! Chapter 4: races, atomics and histograms.

use ch4_atomics::testing::{alphabet, blocks, length, text, threads_per_block};
use ch4_atomics::{
    ascii_histogram_loop, byte_histogram, run_ascii_histogram, run_byte_histogram, run_increment,
    variant, warp_count,
};
use harness::verify::compare_exact;
use harness::{Device, Expect, LaunchShape};
use proptest::prelude::*;

use super::{as_variant, fix_it, write_function, write_it};
use crate::check::{Check, Failure, Wrong};
use crate::exercise::{Exercise, Fails};
use crate::program::Program;
use crate::property::{self, Budget, Observed, wrong_from};

pub(super) fn exercises() -> Vec<Exercise> {
    vec![
        Exercise {
            title: "Lost updates",
            statement: "Every thread of every block adds one to x[0], so after a launch of \
                B blocks of T threads x[0] should be B · T. It ends far lower: increments \
                are lost. Make every one of them count.",
            hints: &[
                "Adding one to x[0] is three steps: read, add, write. What happens when \
                 another thread writes between your read and your write?",
                "Make the read-add-write one indivisible operation: atomicAdd(&x[0], 1).",
            ],
            taught: "A read-modify-write by many threads on one address loses updates unless \
                it is atomic. atomicAdd makes the hardware do the three steps as one; the \
                price is that updates to one address are serialized.",
            ..fix_it(
                variant("racy-increment"),
                variant("atomic-increment"),
                Increment,
                Fails::at_bug(Expect::Race).and_a_wrong_result(),
            )
        },
        Exercise {
            title: "A histogram without atomics",
            statement: "An ASCII histogram: a grid-stride loop over the text, one of 128 \
                bins per byte below 128, on any grid and block; histo starts at zero. When \
                two threads count the same letter at once, one count is lost.",
            hints: &[
                "Racecheck names the line that adds one to a bin. Two threads that read the \
                 same letter: what do they both read, and what do they both write?",
                "Count with atomicAdd(&histo[c], 1u).",
            ],
            taught: "Any shared counter updated by more than one thread needs an atomic \
                update; with few bins and skewed text (every thread counting 'e') collisions \
                are certain, not rare.",
            ..fix_it(
                variant("histogram-no-atomics"),
                variant("histogram-global-atomics"),
                AsciiHistogram,
                Fails::at_bug(Expect::Race),
            )
        },
        Exercise {
            title: "Merging before counting is done",
            statement: "A privatized histogram: each block counts into 128 bins of shared \
                memory, then adds its bins to the global histogram. It merges without waiting: \
                a thread may add a bin to histo while other threads of its block are still \
                counting into it.",
            hints: &[
                "Racecheck names the merge line: which accesses to block_histo[bin] can happen \
                 at the same time as it?",
                "Every thread must finish counting before any thread merges: __syncthreads() \
                 between the counting loop and the merge loop.",
            ],
            taught: "Privatization moves most atomics to fast shared memory, but the private \
                copy is only complete after a barrier: the barrier before the merge is what \
                makes the block's counts final.",
            ..fix_it(
                variant("histogram-shared-no-merge-barrier"),
                variant("histogram-shared"),
                AsciiHistogram,
                // An atomic read of the private bin silences racecheck and leaves the merge
                // as early as before: a wrong result that the barrier's hints still explain.
                Fails::at_bug(Expect::Race).and_a_wrong_result(),
            )
        },
        Exercise {
            title: "One bin per thread",
            statement: "The privatized histogram again, written for blocks of exactly 128 \
                threads: thread t zeroes and merges bin t. The host launches any block size. \
                With fewer threads some bins are never zeroed or merged; with more, threads \
                index past the 128 bins.",
            hints: &[
                "memcheck names the zeroing line for a block of more than 128 threads, and \
                 initcheck the atomicAdd into a bin nobody zeroed for a block of fewer. With \
                 32 threads, which bins does nobody zero, and who merges bin 100?",
                "Let each thread handle bins threadIdx.x, threadIdx.x + blockDim.x, … below \
                 128, in both the zeroing loop and the merge, as the counting loop strides \
                 over the text.",
            ],
            taught: "A kernel should not assume its block size unless the host enforces it. \
                A block-stride loop over the bins works for any block, the same way a \
                grid-stride loop works for any grid.",
            ..fix_it(
                variant("histogram-shared-one-bin-per-thread"),
                variant("histogram-shared"),
                AsciiHistogram,
                Fails::at_bug(Expect::OutOfBounds).and_a_wrong_result(),
            )
        },
        Exercise {
            title: "Two lanes to a word",
            statement: "The 256-bin byte histogram with a private copy of the bins per pair of \
                lanes, in 16 KiB of shared memory: lanes 2k and 2k + 1 share copy k (bin b is \
                word b * 16 + k), the even lane adding 1 to the low 16 bits, the odd lane 1 << \
                16 to the high 16 bits. Zero the copies first (flush zeroes them only after \
                adding them up). Read the bytes as uint4s (16 a load) in block-wide \
                rounds and count each with count_word; a 16-bit half overflows at 65,536, so \
                call flush (given: it adds the block's counts to histo and zeroes them) every \
                FLUSH_ROUNDS rounds and once at the end, from every thread of the block. The \
                n % 16 bytes past the last uint4 are counted one by one. Any grid and block; \
                histo starts at zero.",
            hints: &[
                "Zero pairs, __syncthreads(); then pair_histo = pairs + (threadIdx.x % 32) / 2 \
                 and one = threadIdx.x % 2 == 0 ? 1 : 1 << 16.",
                "Loop for (block_first = blockIdx.x * blockDim.x; block_first < n / 16; \
                 block_first += blockDim.x * gridDim.x): the test is the same for every thread \
                 of the block, so the flush's barriers inside it are reached by all.",
                "In the loop: i = block_first + threadIdx.x; if (i < n / 16) count the four \
                 words of packed[i]; if (++rounds == FLUSH_ROUNDS) { flush(pairs, histo); \
                 rounds = 0; }. After it, the tail, then flush(pairs, histo).",
            ],
            taught: "Packing two counters into a word halves the shared memory, so twice as \
                many blocks fit on a multiprocessor, at the price of a bound: a packed counter \
                must be emptied before it can overflow, and a barrier inside a loop needs a \
                loop whose trip count is the same for the whole block.",
            ..write_it(
                variant("histogram-bytes-lane-pairs"),
                "count the bytes in lane-pair copies of the bins, flushing every FLUSH_ROUNDS rounds and at the end",
                ByteHistogram {
                    name: "histogram-bytes-lane-pairs",
                    whole_warps: false,
                    overflow_case: true,
                },
            )
        },
        Exercise {
            title: "Lanes that share a byte",
            statement: "The warp-aggregated byte histogram: write count_byte, called by all 32 \
                lanes of a warp at once with each lane's key (a byte, or NO_BYTE for a lane \
                with nothing to count). Lanes with the same key find each other with \
                __match_any_sync(0xffffffff, key), and one of them, the lowest, adds their \
                number to block_histo[key]: one atomic for the group instead of one per lane. \
                The rest of the kernel is given. Any grid, blocks of whole warps.",
            hints: &[
                "__match_any_sync returns a mask of the lanes whose key equals yours; __popc of \
                 it is how many they are.",
                "The lowest lane of the mask is __ffs(same) - 1. If key != NO_BYTE and \
                 threadIdx.x % 32 is that lane: atomicAdd(&block_histo[key], __popc(same)).",
            ],
            taught: "When many lanes of a warp update the same address, let the warp agree \
                first: a match instruction groups equal keys and one lane per group does the \
                atomic. On skewed data (text, one letter) that removes most of the collisions.",
            ..write_function(
                variant("histogram-bytes-warp-aggregated"),
                "count_byte",
                "the lowest lane of each group of lanes with the same key adds the group's size",
                "",
                ByteHistogram {
                    name: "histogram-bytes-warp-aggregated",
                    whole_warps: true,
                    overflow_case: false,
                },
            )
        },
        Exercise {
            title: "The last lane reads too soon",
            statement: "Each warp counts the elements of its grid-stride share above a \
                threshold: every lane adds its own count into the warp's shared counter with \
                atomicAdd, and lane 31 writes the total to counts[global warp]. Any grid; \
                blocks of a multiple of 32 threads. On the hardware schedule, where a warp's \
                lanes run in lockstep, every check passes; on the lanes schedule, where they \
                run apart as a GPU's may since Volta, racecheck does not.",
            hints: &[
                "Racecheck names lane 31's read of warp_total and another lane's atomicAdd, \
                 and says which schedule ran them apart. Which lane adds last when the lanes \
                 of a warp need not run together?",
                "Lanes of one warp are ordered by __syncwarp(), not by running side by side: \
                 put __syncwarp() between the atomicAdd and lane 31's read.",
            ],
            taught: "A warp's lanes need not run in lockstep (independent thread scheduling, \
                sm_70 and later): code that trusts them to is racy even when every test on \
                today's GPU passes. __syncwarp() is the warp's barrier; the emulator's lanes \
                schedule is how to find where one is missing.",
            ..fix_it(
                warp_count::variant("warp-count-no-syncwarp"),
                warp_count::variant("warp-count"),
                WarpCount,
                Fails::at_bug(Expect::Race),
            )
        },
    ]
}

/// `kernel(const float *in, unsigned n, float threshold, unsigned *counts)` on any grid of
/// blocks of a multiple of 32 threads; counts[w] must be warp w's count.
struct WarpCount;

impl Check for WarpCount {
    fn run(&self, program: &Program, device: &mut Device, budget: &Budget) -> Result<u32, Failure> {
        let fixed = warp_count::variant("warp-count");
        let yours = as_variant(program.kernel(&fixed.kernel)?, fixed);
        let cap = budget.size(3_000, 2_000_000);
        let strategy = (
            length(cap).prop_filter("within the budget", move |&n| n <= cap),
            any::<u64>(),
            blocks(budget.on_gpu),
            1u32..=32,
        );
        property::run(
            device,
            budget,
            strategy,
            |device, &(n, seed, blocks, warps)| {
                let input = warp_count::input(n, seed);
                let shape = LaunchShape::linear(blocks, warps * 32);
                let seen = Observed::new().fact("n", n).launch(shape);
                match warp_count::run(device, &yours, &input, 0.5, shape) {
                    Err(error) => seen.error(error),
                    Ok(outcome) => {
                        let want = warp_count::warp_count_cpu(&input, 0.5, shape);
                        let comparison = compare_exact(&outcome.counts, &want);
                        seen.reported(outcome.report)
                            .wrong(wrong_from("counts", &comparison).map(|wrong| {
                                // the counts start at u32::MAX before the launch
                                wrong.unwritten_if(
                                    &u32::MAX.to_string(),
                                    "counts start as 4294967295: that is a count no lane 31 wrote",
                                )
                            }))
                    }
                }
            },
        )
    }
}

/// `kernel(const unsigned char *bytes, unsigned n, unsigned *histo)`, 256 bins, any grid (and
/// any block, or whole warps); with `overflow_case`, also one block of one warp on 2²¹ + 512
/// copies of one byte, where every lane counts more than a 16-bit half holds.
struct ByteHistogram {
    name: &'static str,
    whole_warps: bool,
    overflow_case: bool,
}

impl Check for ByteHistogram {
    fn run(&self, program: &Program, device: &mut Device, budget: &Budget) -> Result<u32, Failure> {
        let fixed = variant(self.name);
        let yours = as_variant(program.kernel(&fixed.kernel)?, fixed);
        let cap = budget.size(3_000, 2_000_000);
        let whole_warps = self.whole_warps;
        let threads = threads_per_block().prop_map(move |threads| {
            if whole_warps {
                threads.next_multiple_of(32).min(1024)
            } else {
                threads
            }
        });
        let strategy = (
            length(cap).prop_filter("within the budget", move |&n| n <= cap),
            alphabet(),
            any::<u64>(),
            blocks(budget.on_gpu),
            threads,
        );
        let case = |device: &mut Device, bytes: &[u8], shape: LaunchShape, alphabet| {
            let seen = Observed::new()
                .launch(shape)
                .fact("bytes", text_excerpt(bytes, alphabet));
            match run_byte_histogram(device, &yours, bytes, shape) {
                Err(error) => seen.error(error),
                Ok(outcome) => {
                    let comparison = compare_exact(&outcome.result, &byte_histogram(bytes));
                    seen.reported(outcome.report)
                        .wrong(wrong_from("histo", &comparison))
                }
            }
        };
        let mut cases = property::run(
            device,
            budget,
            strategy,
            |device, &(n, alphabet, seed, blocks, threads)| {
                let bytes = text(n, alphabet, seed);
                case(
                    device,
                    &bytes,
                    LaunchShape::linear(blocks, threads),
                    alphabet,
                )
            },
        )?;
        if self.overflow_case {
            let bytes = vec![b'e'; (1 << 21) + 512];
            let one_warp = LaunchShape::linear(1, 32);
            let strategy = Just(());
            let overflow = Budget {
                cases: 1,
                schedules: vec![harness::Schedule::Hardware],
                ..budget.clone()
            };
            cases += property::run(device, &overflow, strategy, |device, ()| {
                case(
                    device,
                    &bytes,
                    one_warp,
                    ch4_atomics::testing::Alphabet::OneLetter,
                )
                .fact(
                    "why",
                    "each lane counts 65,552 bytes, more than 16 bits hold",
                )
            })?;
        }
        Ok(cases)
    }
}

/// `kernel(int *x)` on any grid and block; x[0] must count every thread.
struct Increment;

impl Check for Increment {
    fn run(&self, program: &Program, device: &mut Device, budget: &Budget) -> Result<u32, Failure> {
        let fixed = variant("atomic-increment");
        let yours = as_variant(program.kernel(&fixed.kernel)?, fixed);
        let strategy = (blocks(budget.on_gpu), threads_per_block());
        property::run(device, budget, strategy, |device, &(blocks, threads)| {
            let shape = LaunchShape::linear(blocks, threads);
            let seen = Observed::new().launch(shape);
            match run_increment(device, &yours, shape) {
                Err(error) => seen.error(error),
                Ok(outcome) => {
                    let want = shape.total_threads() as i64;
                    let wrong = (i64::from(outcome.result) != want).then(|| Wrong {
                        what: "x[0]".into(),
                        expected: want.to_string(),
                        got: outcome.result.to_string(),
                        summary: None,
                    });
                    seen.reported(outcome.report).wrong(wrong)
                }
            }
        })
    }
}

/// `kernel(const unsigned char *text, unsigned n, unsigned *histo)` on any grid and block.
struct AsciiHistogram;

impl Check for AsciiHistogram {
    fn run(&self, program: &Program, device: &mut Device, budget: &Budget) -> Result<u32, Failure> {
        let fixed = variant("histogram-global-atomics");
        let yours = as_variant(program.kernel(&fixed.kernel)?, fixed);
        let cap = budget.size(3_000, 2_000_000);
        let strategy = (
            length(cap).prop_filter("within the budget", move |&n| n <= cap),
            alphabet(),
            any::<u64>(),
            blocks(budget.on_gpu),
            threads_per_block(),
        );
        property::run(
            device,
            budget,
            strategy,
            |device, &(n, alphabet, seed, blocks, threads)| {
                let bytes = text(n, alphabet, seed);
                let shape = LaunchShape::linear(blocks, threads);
                let seen = Observed::new()
                    .launch(shape)
                    .fact("text", text_excerpt(&bytes, alphabet));
                match run_ascii_histogram(device, &yours, &bytes, shape) {
                    Err(error) => seen.error(error),
                    Ok(outcome) => {
                        let comparison =
                            compare_exact(&outcome.result, &ascii_histogram_loop(&bytes));
                        seen.reported(outcome.report)
                            .wrong(wrong_from("histo", &comparison))
                    }
                }
            },
        )
    }
}

fn text_excerpt(bytes: &[u8], alphabet: ch4_atomics::testing::Alphabet) -> String {
    use ch4_atomics::testing::Alphabet;
    /// Columns of the screen the bytes may take, escapes included.
    const SHOWN: usize = 40;
    let mut shown = String::new();
    let mut all = true;
    for &byte in bytes {
        // the bytes as a C string would write them: a bin a learner can look up
        let text = match byte {
            b'"' => "\\\"".to_string(),
            b'\\' => "\\\\".to_string(),
            b' '..=b'~' => char::from(byte).to_string(),
            _ => format!("\\x{byte:02x}"),
        };
        if shown.chars().count() + text.chars().count() > SHOWN {
            all = false;
            break;
        }
        shown.push_str(&text);
    }
    let more = if all { "" } else { "…" };
    let kind = match alphabet {
        Alphabet::AnyByte => "any value",
        Alphabet::Printable => "printable ASCII",
        Alphabet::OneLetter => "one letter",
    };
    let count = match bytes.len() {
        1 => "1 byte".to_string(),
        len => format!("{len} bytes"),
    };
    format!("{count} of {kind}: \"{shown}{more}\"")
}
