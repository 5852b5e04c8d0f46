//! Chapter 8: many GPUs — the ring's chunks, its all-gather step, and reading peers' memory.

use ch8_many_gpus::testing::{any_threads, blocks, devices, length, power_of_two_threads};
use ch8_many_gpus::{
    AllReduceCheck, FINAL_THREADS, SumCheck, all_reduce, inputs, reduce_scatter_check, split_depth,
    split_reduction, values, variant,
};
use harness::{BackendChoice, Device, EmuSettings, Gpus, HarnessError, LaunchShape, Schedule};
use proptest::prelude::*;

use super::{as_variant, fix_it, write_it};
use crate::check::{Check, Failure, Wrong};
use crate::exercise::{Exercise, Fails, PartFixed};
use crate::program::Program;
use crate::property::{self, Budget, Observed, excerpt};

pub(super) fn exercises() -> Vec<Exercise> {
    vec![
        Exercise {
            title: "Chunks that cover every value",
            statement: "One reduce-scatter step of a ring all-reduce over N devices: device r \
                adds its predecessor's copy of chunk `chunk` of n values into its own buffer, \
                reading the predecessor's memory through peer access. After N - 1 steps device r \
                holds chunk r + 1 summed over every device. This step cuts chunks of n / N \
                values; when N does not divide n, the last n % N values are in no chunk. The \
                other steps of the ring, and the host's check, cut chunk c from c·n/N up to \
                (c + 1)·n/N (integer division after the product), which spreads the \
                remainder over the chunks: every device must cut them that same way.",
            hints: &[
                "Try n = 7 on 2 devices: chunk 0 is [0, 3), chunk 1 is [3, 6), and value 6 is \
                 in neither.",
                "Compute both ends of chunk c with the multiplication first, in 64 bits: \
                 c·n/N and (c+1)·n/N. A last chunk that takes the rest covers every value too, \
                 but it is not the host's cut, so the devices would disagree on which values \
                 each chunk holds.",
            ],
            part_fixed: &[PartFixed {
                once: "ranks - 1",
                hints: &[
                    "A last chunk that takes the rest covers every value now, but it is not the \
                     host's cut. Try n = 8 on 3 devices: the host and the ring's other steps \
                     cut [0, 2), [2, 5), [5, 8), spreading the remainder; yours cuts [0, 2), \
                     [2, 4), [4, 8), so value 4 is summed in the wrong chunk's step.",
                    "Cut chunk c as the host does, with the multiplication first, in 64 bits: \
                     from c·n/N up to (c+1)·n/N, for every chunk alike.",
                ],
            }],
            taught: "Split n values into N parts by their boundaries, c·n/N, not by a size \
                n/N: every value lands in exactly one part, whatever n is. A test with round \
                sizes never sees the difference; a property test with odd sizes does.",
            ..fix_it(
                variant("ring-wrong-offset"),
                variant("ring-reduce-scatter"),
                Ring::ReduceScatter,
                Fails::wrong_result(),
            )
        },
        Exercise {
            title: "Pass the finished chunks on",
            statement: "The all-gather half of a ring all-reduce: after reduce-scatter, device r \
                holds chunk r + 1 of the sum. At each of N - 1 steps, device r copies chunk \
                `chunk` from its predecessor (`previous`, read through peer access) into its \
                own buffer `mine`; the host picks the chunk the predecessor holds finished, and \
                waits for its event first. Chunk c of n values among `ranks` devices is \
                [c·n/ranks, (c+1)·n/ranks), as chunk_begin computes. Any grid and block.",
            hints: &[
                "A grid-stride loop from chunk_begin(n, chunk, ranks) + the thread's global \
                 index up to chunk_begin(n, chunk + 1, ranks).",
                "The loop's body is one assignment: value j of the previous device's buffer \
                 goes to value j of this device's, the same index on both sides.",
            ],
            taught: "An all-gather step is a copy from the predecessor, and a kernel can do it \
                by reading peer memory directly. What makes it correct is on the host: the \
                event wait that orders it after the predecessor's last step.",
            ..write_it(
                variant("ring-all-reduce"),
                "copy chunk `chunk` of the previous device's buffer into mine, with a grid-stride loop",
                Ring::AllReduce,
            )
        },
        Exercise {
            title: "Sum the sums where they lie",
            statement: "One block on device 0 adds the block sums of every device: \
                sums_of[d] points to device d's `per_device` sums, in device d's memory (device \
                pointers are unique across devices, and device 0 has peer access to every \
                other). Write sum_over_peers: thread tid adds sums j = tid, tid + blockDim.x, … \
                of the flattened (device, block) pairs, then the block adds its threads' sums \
                with a shared-memory tree, and thread 0 stores *total. One block of a \
                power-of-two size up to 1024 threads.",
            hints: &[
                "Value j is sums_of[j / per_device][j % per_device]: the pointer table first, \
                 then the device's own array.",
                "The tree of chapter 2: s[tid] = sum; __syncthreads(); then for i = \
                 blockDim.x / 2 down to 1, if (tid < i) s[tid] += s[tid + i]; and a barrier \
                 each step.",
            ],
            taught: "A pointer into another device's memory is an ordinary pointer once peer \
                access is on: a kernel can follow a table of them and read the data where it \
                lies, with no copy.",
            ..write_it(
                variant("sum-over-peers"),
                "sum every device's block sums through sums_of into *total, one block",
                SumOverPeers,
            )
        },
    ]
}

/// The learner's devices: every GPU when the exercise runs on GPUs of a machine with two or
/// more, else `count` emulated devices under the schedule the check is on.
fn devices_like(device: &Device, count: usize) -> Result<Gpus, HarnessError> {
    let schedule = device
        .emu_settings()
        .map_or(Schedule::Hardware, |s| s.schedule);
    let mut gpus = if device.kind().is_cuda() {
        match Gpus::open(BackendChoice::Cuda, 2, count) {
            Err(HarnessError::TooFewGpus { .. }) => Gpus::open(BackendChoice::Emu, 2, count)?,
            other => other?,
        }
    } else {
        Gpus::open(BackendChoice::Emu, 2, count)?
    };
    gpus.set_emu_settings(EmuSettings {
        schedule,
        ..EmuSettings::default()
    });
    Ok(gpus)
}

/// `kernel(float *mine, const float *previous, unsigned long long n, unsigned chunk, unsigned
/// ranks)` as one half of the ring, on 2 to 8 devices, any lengths and shapes.
enum Ring {
    ReduceScatter,
    AllReduce,
}

impl Check for Ring {
    fn run(&self, program: &Program, device: &mut Device, budget: &Budget) -> Result<u32, Failure> {
        let like = match self {
            Self::ReduceScatter => variant("ring-reduce-scatter"),
            Self::AllReduce => variant("ring-all-reduce"),
        };
        let yours = as_variant(program.kernel(&like.kernel)?, like);
        let strategy = (length(), devices(), blocks(), any_threads(), any::<u64>());
        property::run(
            device,
            budget,
            strategy,
            |device, &(n, count, blocks, threads, seed)| {
                let shape = LaunchShape::linear(blocks, threads);
                let seen = Observed::new().fact("n", n).launch(shape);
                let mut gpus = match devices_like(device, count) {
                    Ok(gpus) => gpus,
                    Err(error) => return seen.error(error),
                };
                let ranks = gpus.count();
                let data = inputs(ranks, n, seed);
                let seen = seen
                    .fact("devices", ranks)
                    .fact("device 0's values", excerpt(&data[0], None));
                match all_reduce(&mut gpus, &yours, &data, shape) {
                    Err(error) => seen.error(error),
                    Ok(outcome) => {
                        let check = match self {
                            Self::ReduceScatter => reduce_scatter_check(&outcome.outputs, &data),
                            Self::AllReduce => AllReduceCheck::new(&outcome.outputs, &data),
                        };
                        let wrong = match (check.first_wrong, check.disagreement) {
                            (Some((device, i, got, want, bound)), _) => Some(Wrong {
                                what: format!("device {device}'s value {i}"),
                                expected: property::within_bound(want, bound),
                                got: got.to_string(),
                                summary: property::how_many_differ(
                                    check.wrong,
                                    n * ranks,
                                    "values on all devices",
                                ),
                            }),
                            (None, Some(i)) => Some(Wrong {
                                what: format!("value {i}"),
                                expected: "the same bits on every device".into(),
                                got: "different bits on two devices".into(),
                                summary: None,
                            }),
                            (None, None) => None,
                        };
                        seen.reported(outcome.report).wrong(wrong)
                    }
                }
            },
        )
    }
}

/// `sum_over_peers(const float *const *sums_of, unsigned devices, unsigned per_device, float
/// *total)` after every device's block sums, within the split reduction's bound.
struct SumOverPeers;

impl Check for SumOverPeers {
    fn run(&self, program: &Program, device: &mut Device, budget: &Budget) -> Result<u32, Failure> {
        let like = variant("sum-over-peers");
        let yours = as_variant(program.kernel(&like.kernel)?, like);
        let strategy = (
            length(),
            devices(),
            blocks(),
            power_of_two_threads(),
            any::<u64>(),
        );
        property::run(
            device,
            budget,
            strategy,
            |device, &(n, count, blocks, threads, seed)| {
                let shape = LaunchShape::linear(blocks, threads);
                // Two launches: the block sums on every device, then yours, the one the
                // report's threads belong to.
                let seen = Observed::new()
                    .fact("n", n)
                    .fact("block sums, on each device", shape)
                    .fact(
                        "sum_over_peers, yours",
                        format!("{} on device 0", LaunchShape::linear(1, FINAL_THREADS)),
                    );
                let mut gpus = match devices_like(device, count) {
                    Ok(gpus) => gpus,
                    Err(error) => return seen.error(error),
                };
                let ranks = gpus.count();
                let data = values(n, seed);
                // What sum_over_peers is handed, so the case can be worked by hand: how many
                // block sums each device holds, and which values went into each device's.
                let slices: Vec<String> = (0..ranks)
                    .map(|d| {
                        let (begin, end) = (
                            ch8_many_gpus::chunk_begin(n, d, ranks),
                            ch8_many_gpus::chunk_begin(n, d + 1, ranks),
                        );
                        format!("device {d} values [{begin}..{end})")
                    })
                    .collect();
                let seen = seen
                    .fact("devices", ranks)
                    .fact("per_device (block sums on each)", shape.grid.x)
                    .fact("split", slices.join(", "))
                    .fact("values", excerpt(&data, None));
                match split_reduction(&mut gpus, &yours, &data, shape) {
                    Err(error) => seen.error(error),
                    Ok(outcome) => {
                        let depth = split_depth(yours.kind, n, ranks, shape, FINAL_THREADS);
                        let check = SumCheck::new(outcome.total, &data, depth);
                        let wrong = (!check.is_within()).then(|| Wrong {
                            what: "the sum".into(),
                            expected: property::within_bound(check.want, check.bound),
                            got: check.got.to_string(),
                            summary: None,
                        });
                        seen.reported(outcome.report).wrong(wrong)
                    }
                }
            },
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use harness::Expect;

    #[test]
    fn every_exercise_starts_from_a_chapter_kernel() {
        let names: Vec<&str> = exercises().iter().map(|e| e.name).collect();
        assert_eq!(
            names,
            ["ring-wrong-offset", "ring-all-reduce", "sum-over-peers"]
        );
        assert!(variant("ring-wrong-offset").expect == Expect::WrongResult);
    }
}
