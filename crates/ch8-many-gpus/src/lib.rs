//! Chapter 8: when one GPU is not enough — a reduction split over devices, peer copies, peer
//! access, and a ring all-reduce written by hand.
//!
//! Every variant in [`VARIANTS`] is one kernel file in `kernels/ch8_many_gpus/`, in teaching
//! order; the walk-through, the tests and the book all read this list. The host code of each
//! step is here too, since on several devices the order of copies, launches and events is half
//! of the lesson: [`split_reduction`] and [`all_reduce`].

use harness::rand::Rng;
use harness::verify::bounds;
use harness::{
    Arg, Buffer, Expect, GpuEvent, GpuStream, Gpus, LaunchReport, LaunchShape, Result, Variant,
    kernel,
};

#[cfg(feature = "testing")]
pub mod testing;
#[cfg(feature = "walkthrough")]
pub mod walkthrough;

/// Devices the emulator holds when the user names no other number.
pub const DEFAULT_EMULATED_DEVICES: usize = 2;
/// The most devices `--devices` accepts on the emulator: a ring of 8 is a full NVLink node.
pub const MAX_EMULATED_DEVICES: usize = 8;
/// The reduction kernels' shared array holds one float per thread of the largest block.
pub const MAX_THREADS: u32 = 1024;

/// How a variant's kernel is driven.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// Each device sums its slice into one float per block; the host adds them all.
    SplitOnHost,
    /// The block sums of every device are peer-copied to device 0 and summed there.
    GatherByCopies,
    /// Device 0 reads every device's block sums in place, through peer access.
    SumOverPeers,
    /// The reduce-scatter half of the ring alone: device r ends with chunk r + 1 summed.
    ReduceScatter,
    /// The whole ring all-reduce: reduce-scatter, then all-gather, one of them with this
    /// variant's kernel; `wait` is whether each step waits for the previous device's event.
    AllReduce { wait: bool },
    /// Two all-reduces, A and B, by a ring whose ranks hand over through flags in each other's
    /// memory instead of shared events; `same_order` is whether every rank issues A first.
    FlagRing { same_order: bool },
}

impl Step {
    pub fn is_split_reduction(self) -> bool {
        matches!(
            self,
            Self::SplitOnHost | Self::GatherByCopies | Self::SumOverPeers
        )
    }
}

pub type Ch8Variant = Variant<Step>;

pub const VARIANTS: &[Ch8Variant] = &[
    Variant {
        name: "split-on-host",
        kernel: kernel!("ch8_many_gpus", "01_block_sums", "block_sums"),
        expect: Expect::Correct,
        summary: "each device sums its slice into block sums; the host downloads and adds them",
        kind: Step::SplitOnHost,
    },
    Variant {
        name: "gather-by-copies",
        kernel: kernel!("ch8_many_gpus", "02_sum_gathered", "sum_gathered"),
        expect: Expect::Correct,
        summary: "peer copies bring every device's block sums to device 0, which sums them after an event wait",
        kind: Step::GatherByCopies,
    },
    Variant {
        name: "sum-over-peers",
        kernel: kernel!("ch8_many_gpus", "03_sum_over_peers", "sum_over_peers"),
        expect: Expect::Correct,
        summary: "device 0 reads the other devices' block sums where they are, through peer access",
        kind: Step::SumOverPeers,
    },
    Variant {
        name: "ring-reduce-scatter",
        kernel: kernel!("ch8_many_gpus", "04_ring_reduce_step", "ring_reduce_step"),
        expect: Expect::Correct,
        summary: "the ring's first half: N − 1 steps, each device adds its predecessor's chunk, one event per step",
        kind: Step::ReduceScatter,
    },
    Variant {
        name: "ring-all-reduce",
        kernel: kernel!("ch8_many_gpus", "05_ring_gather_step", "ring_gather_step"),
        expect: Expect::Correct,
        summary: "the ring's second half: N − 1 steps pass the finished chunks on, and every device holds the sum",
        kind: Step::AllReduce { wait: true },
    },
    Variant {
        name: "ring-without-wait",
        kernel: kernel!(
            "ch8_many_gpus",
            "06_ring_without_wait",
            "ring_gather_without_wait"
        ),
        expect: Expect::Race,
        summary: "no cudaStreamWaitEvent before a step: a device copies its predecessor's chunk before it is summed",
        kind: Step::AllReduce { wait: false },
    },
    Variant {
        name: "ring-wrong-offset",
        kernel: kernel!(
            "ch8_many_gpus",
            "07_ring_wrong_offset",
            "ring_step_wrong_offset"
        ),
        expect: Expect::WrongResult,
        summary: "chunks of n / N values: when N does not divide n, the last n % N values are never summed",
        kind: Step::AllReduce { wait: true },
    },
    Variant {
        name: "ring-by-flags",
        kernel: kernel!("ch8_many_gpus", "08_ring_step_by_flags", "ring_step"),
        expect: Expect::Correct,
        summary: "two all-reduces; each rank waits on a flag its predecessor writes (cuStreamWaitValue32), so no event crosses ranks and each could be its own process",
        kind: Step::FlagRing { same_order: true },
    },
    Variant {
        name: "collectives-out-of-order",
        kernel: kernel!(
            "ch8_many_gpus",
            "09_collectives_out_of_order",
            "ring_step_out_of_order"
        ),
        expect: Expect::Deadlock,
        summary: "odd ranks issue all-reduce B before A: each rank waits for a flag that a rank busy with the other collective never sets, and every device waits forever",
        kind: Step::FlagRing { same_order: false },
    },
];

/// The variant named `name`; panics only on a typo in this crate, caught by its tests.
pub fn variant(name: &str) -> &'static Ch8Variant {
    match harness::find_variant(VARIANTS, name) {
        Ok(variant) => variant,
        Err(message) => panic!("{message}"),
    }
}

// ANCHOR: chunks
/// The first index of chunk `chunk` when `n` values are split among `parts`: chunk c is
/// `[c·n/parts, (c+1)·n/parts)`, as the kernels compute it. The chunks differ by at most one
/// value and cover all `n`.
pub fn chunk_begin(n: usize, chunk: usize, parts: usize) -> usize {
    (n as u128 * chunk as u128 / parts as u128) as usize
}

/// The chunk device `rank` adds into at reduce-scatter step `step` of a ring of `ranks`: its
/// predecessor finished that chunk one step earlier.
pub fn reduce_chunk(rank: usize, step: usize, ranks: usize) -> usize {
    (rank + 2 * ranks - step - 1) % ranks
}

/// The chunk device `rank` copies from its predecessor at all-gather step `step`: the one the
/// predecessor holds finished.
pub fn gather_chunk(rank: usize, step: usize, ranks: usize) -> usize {
    (rank + ranks - step) % ranks
}
// ANCHOR_END: chunks

/// Values drawn uniformly from [−1, 1) with `seed`, so any run can be repeated.
pub fn values(n: usize, seed: u64) -> Vec<f32> {
    let mut rng = harness::cli::seeded_rng(seed);
    (0..n).map(|_| rng.random_range(-1.0f32..1.0)).collect()
}

/// One input per device for an all-reduce, each of `n` values, from one seed.
pub fn inputs(devices: usize, n: usize, seed: u64) -> Vec<Vec<f32>> {
    (0..devices)
        .map(|rank| values(n, seed.wrapping_add(rank as u64)))
        .collect()
}

// ANCHOR: cpu_reference
/// The sum of every input, element by element, in f64; and Σ|x| per element, which the error
/// bound scales with.
pub fn all_reduce_f64(inputs: &[Vec<f32>]) -> (Vec<f64>, Vec<f64>) {
    let n = inputs.first().map_or(0, Vec::len);
    let mut sum = vec![0.0; n];
    let mut abs = vec![0.0; n];
    for input in inputs {
        for (i, &x) in input.iter().enumerate() {
            sum[i] += f64::from(x);
            abs[i] += f64::from(x).abs();
        }
    }
    (sum, abs)
}
// ANCHOR_END: cpu_reference

/// The split reduction's error bound: a device's grid-stride loop, its block tree, and then the
/// block sums added one after another on the host, or by one block (its loop and tree).
pub fn split_depth(
    step: Step,
    n: usize,
    devices: usize,
    shape: LaunchShape,
    final_threads: u32,
) -> u64 {
    let threads = u64::from(shape.block.x);
    let blocks = u64::from(shape.grid.x);
    let slice = (n as u64).div_ceil(devices as u64);
    let per_device = slice.div_ceil(blocks * threads) + bounds::tree_depth(threads);
    let sums = devices as u64 * blocks;
    let finish = match step {
        Step::SplitOnHost => sums,
        _ => sums.div_ceil(u64::from(final_threads)) + bounds::tree_depth(u64::from(final_threads)),
    };
    per_device + finish
}

/// Threads of the one block that sums the gathered block sums on device 0.
pub const FINAL_THREADS: u32 = 256;

/// A split reduction's result and what the checkers said about all of its work.
#[derive(Debug)]
pub struct Reduction {
    pub total: f32,
    pub report: LaunchReport,
}

/// Splits `data` over every device of `gpus` into slices of (almost) equal length, sums each
/// slice on its device with `block_sums` in `shape`, and finishes as `variant` says.
pub fn split_reduction(
    gpus: &mut Gpus,
    variant: &Ch8Variant,
    data: &[f32],
    shape: LaunchShape,
) -> Result<Reduction> {
    split_reduction_unnamed(gpus, variant, data, shape).map_err(|e| e.in_variant(variant.name))
}

fn split_reduction_unnamed(
    gpus: &mut Gpus,
    variant: &Ch8Variant,
    data: &[f32],
    shape: LaunchShape,
) -> Result<Reduction> {
    let devices = gpus.count();
    let block_sums_kernel = variant_kernel("split-on-host");
    let blocks = shape.grid.x as usize;
    let mut streams = Vec::with_capacity(devices);
    let mut slices = Vec::with_capacity(devices);
    let mut sums: Vec<Buffer<f32>> = Vec::with_capacity(devices);
    for device in 0..devices {
        let (begin, end) = (
            chunk_begin(data.len(), device, devices),
            chunk_begin(data.len(), device + 1, devices),
        );
        slices.push(gpus.upload(device, &data[begin..end], &format!("slice{device}"))?);
        sums.push(gpus.zeros(device, blocks, &format!("sums{device}"))?);
        streams.push(gpus.stream(device)?);
    }
    // ANCHOR: split
    for device in 0..devices {
        let slice = &slices[device];
        gpus.launch_on(
            &streams[device],
            &block_sums_kernel,
            shape,
            &[
                slice.into(),
                Arg::U64(slice.len() as u64),
                (&sums[device]).into(),
            ],
        )?;
    }
    // ANCHOR_END: split
    let total = match variant.kind {
        Step::SplitOnHost => {
            let mut total = 0.0f32;
            for buffer in &sums {
                total = gpus.download(buffer)?.iter().fold(total, |sum, &x| sum + x);
            }
            total
        }
        Step::GatherByCopies => gather_by_copies(gpus, variant, &streams, &sums)?,
        _ => sum_over_peers(gpus, variant, &streams, &sums)?,
    };
    let report = gpus.synchronize()?;
    Ok(Reduction { total, report })
}

fn variant_kernel(name: &str) -> harness::KernelSource {
    variant(name).kernel
}

/// Waits on device 0's stream for every other device's work so far.
fn wait_for_all(gpus: &mut Gpus, streams: &[GpuStream]) -> Result<()> {
    let events: Vec<GpuEvent> = streams[1..]
        .iter()
        .map(|stream| gpus.record(stream))
        .collect::<Result<_>>()?;
    for event in &events {
        gpus.wait(&streams[0], event)?;
    }
    Ok(())
}

fn gather_by_copies(
    gpus: &mut Gpus,
    variant: &Ch8Variant,
    streams: &[GpuStream],
    sums: &[Buffer<f32>],
) -> Result<f32> {
    let blocks = sums[0].len();
    let mut gathered = gpus.zeros::<f32>(0, blocks * sums.len(), "gathered")?;
    let total = gpus.zeros::<f32>(0, 1, "total")?;
    // ANCHOR: gather
    for (device, stream) in streams.iter().enumerate() {
        gpus.copy(
            stream,
            &mut gathered,
            device * blocks,
            &sums[device],
            0,
            blocks,
        )?;
    }
    wait_for_all(gpus, streams)?;
    gpus.launch_on(
        &streams[0],
        &variant.kernel,
        LaunchShape::linear(1, FINAL_THREADS),
        &[
            (&gathered).into(),
            Arg::U32(gathered.len() as u32),
            (&total).into(),
        ],
    )?;
    // ANCHOR_END: gather
    Ok(gpus.download(&total)?[0])
}

fn sum_over_peers(
    gpus: &mut Gpus,
    variant: &Ch8Variant,
    streams: &[GpuStream],
    sums: &[Buffer<f32>],
) -> Result<f32> {
    // ANCHOR: peers
    for peer in 1..sums.len() {
        gpus.enable_peer_access(0, peer)?;
    }
    let addresses: Vec<u64> = sums
        .iter()
        .map(|buffer| gpus.address(buffer))
        .collect::<Result<_>>()?;
    let sums_of = gpus.upload(0, &addresses, "sums_of")?;
    let total = gpus.zeros::<f32>(0, 1, "total")?;
    wait_for_all(gpus, streams)?;
    gpus.launch_on(
        &streams[0],
        &variant.kernel,
        LaunchShape::linear(1, FINAL_THREADS),
        &[
            (&sums_of).into(),
            Arg::U32(sums.len() as u32),
            Arg::U32(sums[0].len() as u32),
            (&total).into(),
        ],
    )?;
    // ANCHOR_END: peers
    Ok(gpus.download(&total)?[0])
}

/// What an all-reduce left on every device, and what the checkers said.
#[derive(Debug)]
pub struct AllReduce {
    pub outputs: Vec<Vec<f32>>,
    pub report: LaunchReport,
}

/// The kernels a variant's ring uses: its reduce-scatter step, and its all-gather step (none
/// for the reduce-scatter variant alone).
pub fn ring_kernels(
    variant: &Ch8Variant,
) -> (harness::KernelSource, Option<harness::KernelSource>) {
    let reduce = variant_kernel("ring-reduce-scatter");
    let gather = variant_kernel("ring-all-reduce");
    match variant.kind {
        Step::ReduceScatter => (variant.kernel, None),
        _ if variant.expect == Expect::WrongResult => (variant.kernel, Some(gather)),
        _ => (reduce, Some(variant.kernel)),
    }
}

/// Uploads `inputs[r]` to device r, runs `variant`'s ring over them in `shape` and downloads
/// what every device holds.
pub fn all_reduce(
    gpus: &mut Gpus,
    variant: &Ch8Variant,
    inputs: &[Vec<f32>],
    shape: LaunchShape,
) -> Result<AllReduce> {
    all_reduce_unnamed(gpus, variant, inputs, shape).map_err(|e| e.in_variant(variant.name))
}

fn all_reduce_unnamed(
    gpus: &mut Gpus,
    variant: &Ch8Variant,
    inputs: &[Vec<f32>],
    shape: LaunchShape,
) -> Result<AllReduce> {
    let mut buffers = inputs
        .iter()
        .enumerate()
        .map(|(rank, input)| gpus.upload(rank, input, &format!("data{rank}")))
        .collect::<Result<Vec<_>>>()?;
    let ring = Ring::new(gpus)?;
    ring.run(gpus, variant, &mut buffers, shape)?;
    let report = gpus.synchronize()?;
    let outputs = buffers
        .iter()
        .map(|buffer| gpus.download(buffer))
        .collect::<Result<_>>()?;
    Ok(AllReduce { outputs, report })
}

/// A ring over every device of a machine: one stream per device, and each device allowed to
/// read its predecessor's memory.
#[derive(Debug)]
pub struct Ring {
    pub streams: Vec<GpuStream>,
}

impl Ring {
    pub fn new(gpus: &mut Gpus) -> Result<Self> {
        let ranks = gpus.count();
        for rank in 0..ranks {
            let previous = (rank + ranks - 1) % ranks;
            if previous != rank {
                gpus.enable_peer_access(rank, previous)?;
            }
        }
        let streams = (0..ranks)
            .map(|rank| gpus.stream(rank))
            .collect::<Result<_>>()?;
        Ok(Self { streams })
    }

    /// Queues the whole ring on the streams (without waiting for it): reduce-scatter, then, for
    /// an all-reduce, all-gather.
    pub fn run(
        &self,
        gpus: &mut Gpus,
        variant: &Ch8Variant,
        buffers: &mut [Buffer<f32>],
        shape: LaunchShape,
    ) -> Result<()> {
        let (reduce, gather) = ring_kernels(variant);
        let wait = !matches!(variant.kind, Step::AllReduce { wait: false });
        let ranks = buffers.len();
        let n = buffers.first().map_or(0, Buffer::len);
        // ANCHOR: ring
        // `done[r]`: device r's last step, which its successor waits for before reading from it.
        let mut done: Vec<Option<GpuEvent>> = (0..ranks).map(|_| None).collect();
        let mut phase = |gpus: &mut Gpus,
                         kernel: &harness::KernelSource,
                         chunk_of: fn(usize, usize, usize) -> usize|
         -> Result<()> {
            for step in 0..ranks.saturating_sub(1) {
                let mut finished = Vec::with_capacity(ranks);
                for rank in 0..ranks {
                    let previous = (rank + ranks - 1) % ranks;
                    if wait && let Some(event) = &done[previous] {
                        gpus.wait(&self.streams[rank], event)?;
                    }
                    let chunk = chunk_of(rank, step, ranks);
                    gpus.launch_on(
                        &self.streams[rank],
                        kernel,
                        shape,
                        &[
                            (&buffers[rank]).into(),
                            (&buffers[previous]).into(),
                            Arg::U64(n as u64),
                            Arg::U32(chunk as u32),
                            Arg::U32(ranks as u32),
                        ],
                    )?;
                    finished.push(gpus.record(&self.streams[rank])?);
                }
                for (rank, event) in finished.into_iter().enumerate() {
                    done[rank] = Some(event);
                }
            }
            Ok(())
        };
        phase(gpus, &reduce, reduce_chunk)?;
        if let Some(gather) = gather {
            phase(gpus, &gather, gather_chunk)?;
        }
        // ANCHOR_END: ring
        Ok(())
    }

    /// Queues rank `rank`'s share of two all-reduces by flags on its stream: everything here
    /// is the rank's own stream, its own buffers, its predecessor's buffer address and its
    /// successor's flags — what one process per GPU has after exchanging IPC handles.
    #[allow(clippy::too_many_arguments)]
    pub fn issue_by_flags(
        &self,
        gpus: &mut Gpus,
        variant: &Ch8Variant,
        rank: usize,
        same_order: bool,
        data: &[Vec<Buffer<f32>>; 2],
        flags: &[Buffer<u32>],
        shape: LaunchShape,
    ) -> Result<()> {
        let ranks = flags.len();
        let (previous, next) = ((rank + ranks - 1) % ranks, (rank + 1) % ranks);
        let stream = &self.streams[rank];
        // ANCHOR: flags
        for collective in collective_order(rank, same_order) {
            let buffers = &data[collective];
            for step in 0..2 * ranks.saturating_sub(1) {
                if step > 0 {
                    // The predecessor wrote `step` here when its step before finished.
                    gpus.wait_for_value(stream, &flags[rank], collective, step as u32)?;
                }
                gpus.launch_on(
                    stream,
                    &variant.kernel,
                    shape,
                    &[
                        (&buffers[rank]).into(),
                        (&buffers[previous]).into(),
                        Arg::U64(buffers[rank].len() as u64),
                        Arg::U32(rank as u32),
                        Arg::U32(step as u32),
                        Arg::U32(ranks as u32),
                    ],
                )?;
                gpus.signal(stream, &flags[next], collective, step as u32 + 1)?;
            }
        }
        // ANCHOR_END: flags
        Ok(())
    }
}

/// What two all-reduces by flags left on every device, A's then B's, and what the checkers
/// said (a stuck ring among it).
#[derive(Debug)]
pub struct TwoAllReduces {
    pub outputs: [Vec<Vec<f32>>; 2],
    pub report: LaunchReport,
}

/// The collectives' names in reports: flag word 0 is A's, word 1 is B's.
pub const COLLECTIVES: [&str; 2] = ["A", "B"];

// ANCHOR: out_of_order
/// The order rank `rank` issues the two all-reduces in. Collectives are matched by the order
/// ranks call them, not by name: every rank must call them in the same order.
pub fn collective_order(rank: usize, same_order: bool) -> [usize; 2] {
    if !same_order && rank % 2 == 1 {
        [1, 0] // BUG: odd ranks issue B before A, and collectives are matched by the order ranks call them
    } else {
        [0, 1]
    }
}
// ANCHOR_END: out_of_order

/// Where `collectives-out-of-order`'s bug is: not in its kernel (08's, unchanged) but in the
/// host's order of collectives, this file's `// BUG:` line, as `crates/…/lib.rs:LINE`.
pub fn host_bug_location() -> String {
    const SOURCE: &str = include_str!("lib.rs");
    // Spelled in two pieces so that this line is not the marker it looks for.
    let marker = concat!("// ", "BUG:");
    let line = SOURCE
        .lines()
        .position(|line| line.contains(marker))
        .map_or(0, |index| index + 1);
    format!("crates/ch8-many-gpus/src/lib.rs:{line}")
}

/// Uploads `inputs[c][r]` to device r for collectives A (c = 0) and B (c = 1), lets every rank
/// issue its two all-reduces by flags in its own order (`variant`'s), and downloads what every
/// device holds. Emulator-only for a variant whose ranks disagree: a GPU would hang.
pub fn two_all_reduces(
    gpus: &mut Gpus,
    variant: &Ch8Variant,
    inputs: [&[Vec<f32>]; 2],
    shape: LaunchShape,
) -> Result<TwoAllReduces> {
    gpus.ensure_can_run(variant)?;
    two_all_reduces_unnamed(gpus, variant, inputs, shape).map_err(|e| e.in_variant(variant.name))
}

fn two_all_reduces_unnamed(
    gpus: &mut Gpus,
    variant: &Ch8Variant,
    inputs: [&[Vec<f32>]; 2],
    shape: LaunchShape,
) -> Result<TwoAllReduces> {
    let same_order = !matches!(variant.kind, Step::FlagRing { same_order: false });
    let ranks = gpus.count();
    let mut data: [Vec<Buffer<f32>>; 2] = [Vec::new(), Vec::new()];
    for (collective, buffers) in data.iter_mut().enumerate() {
        for (rank, input) in inputs[collective].iter().enumerate().take(ranks) {
            let label = format!("{}{rank}", COLLECTIVES[collective].to_lowercase());
            buffers.push(gpus.upload(rank, input, &label)?);
        }
    }
    let flags = (0..ranks)
        .map(|rank| gpus.flags(rank, COLLECTIVES.len(), &format!("flags{rank}")))
        .collect::<Result<Vec<_>>>()?;
    let ring = Ring::new(gpus)?;
    for rank in 0..ranks {
        let next = (rank + 1) % ranks;
        if next != rank {
            gpus.enable_peer_access(rank, next)?;
        }
    }
    for rank in 0..ranks {
        ring.issue_by_flags(gpus, variant, rank, same_order, &data, &flags, shape)?;
    }
    let report = gpus.synchronize()?;
    let mut outputs = [Vec::new(), Vec::new()];
    for (collective, buffers) in data.iter().enumerate() {
        outputs[collective] = buffers
            .iter()
            .map(|buffer| gpus.download(buffer))
            .collect::<Result<_>>()?;
    }
    Ok(TwoAllReduces { outputs, report })
}

/// An all-reduce's outputs checked against the f64 sum: each value within `γ_{N−1}·Σ|x|` (the
/// ring adds the N inputs of a value one after another), and every device holding the same bits.
#[derive(Debug, Clone, PartialEq)]
pub struct AllReduceCheck {
    /// (device, index, got, want, bound) of the first value outside its bound.
    pub first_wrong: Option<(usize, usize, f32, f64, f64)>,
    pub wrong: usize,
    /// The first index where two devices disagree.
    pub disagreement: Option<usize>,
    pub values: usize,
}

impl AllReduceCheck {
    pub fn new(outputs: &[Vec<f32>], inputs: &[Vec<f32>]) -> Self {
        let (want, abs) = all_reduce_f64(inputs);
        let depth = inputs.len().saturating_sub(1) as u64;
        let mut check = Self {
            first_wrong: None,
            wrong: 0,
            disagreement: None,
            values: want.len(),
        };
        for (device, output) in outputs.iter().enumerate() {
            for (i, (&got, (&w, &a))) in output.iter().zip(want.iter().zip(&abs)).enumerate() {
                let bound = bounds::sum_f32(depth, a);
                if (f64::from(got) - w).abs() > bound {
                    check.wrong += 1;
                    check.first_wrong.get_or_insert((device, i, got, w, bound));
                }
            }
        }
        if let Some(first) = outputs.first() {
            check.disagreement = outputs[1..].iter().find_map(|other| {
                first
                    .iter()
                    .zip(other)
                    .position(|(a, b)| a.to_bits() != b.to_bits())
            });
        }
        check
    }

    pub fn is_right(&self) -> bool {
        self.wrong == 0 && self.disagreement.is_none()
    }
}

/// A reduce-scatter's outputs checked: device r's chunk r + 1 holds the sum of that chunk
/// within its bound; the rest of each device's buffer is partial sums, not checked.
pub fn reduce_scatter_check(outputs: &[Vec<f32>], inputs: &[Vec<f32>]) -> AllReduceCheck {
    let ranks = outputs.len();
    let n = inputs.first().map_or(0, Vec::len);
    let (want, abs) = all_reduce_f64(inputs);
    let depth = ranks.saturating_sub(1) as u64;
    let mut check = AllReduceCheck {
        first_wrong: None,
        wrong: 0,
        disagreement: None,
        values: n,
    };
    for (rank, output) in outputs.iter().enumerate() {
        let chunk = (rank + 1) % ranks;
        for i in chunk_begin(n, chunk, ranks)..chunk_begin(n, chunk + 1, ranks) {
            let bound = bounds::sum_f32(depth, abs[i]);
            if (f64::from(output[i]) - want[i]).abs() > bound {
                check.wrong += 1;
                check
                    .first_wrong
                    .get_or_insert((rank, i, output[i], want[i], bound));
            }
        }
    }
    check
}

impl std::fmt::Display for AllReduceCheck {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match (self.first_wrong, self.disagreement) {
            (None, None) => write!(
                f,
                "✓ all {} values within γ_(N−1)·Σ|x| of the f64 sum",
                self.values
            ),
            (Some((device, i, got, want, bound)), _) => write!(
                f,
                "✗ {} wrong; first: device {device}, value {i}: {got} but the sum is {want:.6} (bound {bound:.1e})",
                self.wrong
            ),
            (None, Some(i)) => write!(f, "✗ the devices disagree from value {i} on"),
        }
    }
}

/// A split reduction's total checked against the f64 sum under its error bound.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SumCheck {
    pub got: f32,
    pub want: f64,
    pub bound: f64,
    pub depth: u64,
}

impl SumCheck {
    pub fn new(got: f32, data: &[f32], depth: u64) -> Self {
        let want = data.iter().map(|&x| f64::from(x)).sum();
        let abs: f64 = data.iter().map(|&x| f64::from(x).abs()).sum();
        Self {
            got,
            want,
            bound: bounds::sum_f32(depth, abs),
            depth,
        }
    }

    pub fn error(&self) -> f64 {
        (f64::from(self.got) - self.want).abs()
    }

    pub fn is_within(&self) -> bool {
        self.error() <= self.bound
    }
}

impl std::fmt::Display for SumCheck {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} result {} · reference {:.4} · error {:.2e} · bound {:.2e} (γ_{} · Σ|xᵢ|)",
            if self.is_within() { "✓" } else { "✗" },
            self.got,
            self.want,
            self.error(),
            self.bound,
            self.depth + 1,
        )
    }
}
