//! `cargo run -p ch8-many-gpus`: the chapter in teaching order, on every GPU of the machine or on
//! that many emulated devices.

use std::io::Write;
use std::path::PathBuf;

use harness::report::{table, write_gpu_table};
use harness::walk::{checker_section, flush, heading, opening, say, selected, timing_skipped};
use harness::{Arg, EmuSettings, Gpus, LaunchShape, Result, VendorTiming};

use crate::{
    AllReduceCheck, COLLECTIVES, Ch8Variant, FINAL_THREADS, Ring, Step, SumCheck, VARIANTS,
    all_reduce, chunk_begin, collective_order, host_bug_location, inputs, reduce_scatter_check,
    split_depth, split_reduction, two_all_reduces, values, variant,
};

/// The split reduction's launch on every device: 16 blocks of 256 threads.
pub const SPLIT_SHAPE: LaunchShape = LaunchShape::linear(16, 256);
/// The ring steps' launch on every device.
pub const RING_SHAPE: LaunchShape = LaunchShape::linear(8, 256);
/// Values in the split reduction on the emulator: small enough to finish in a few seconds.
pub const EMULATOR_SPLIT_LEN: usize = 200_003;
/// Values per device in the all-reduce steps on the emulator; not a multiple of 2, 3, 4 or 8,
/// so the wrong chunk offset shows.
pub const EMULATOR_RING_LEN: usize = 20_011;
/// The same on GPUs.
pub const GPU_SPLIT_LEN: usize = 1 << 26;
pub const GPU_RING_LEN: usize = (1 << 24) + 1;
/// (values per device, runs) of the race's repeated runs on GPUs.
pub const RACE_TRIALS: [(usize, u32); 2] = [(4_099, 200), ((1 << 20) + 1, 50)];
/// Runs, and values per device, of the race with a late predecessor.
pub const LATE_TRIALS: u32 = 50;
pub const LATE_LEN: usize = (1 << 20) + 1;
/// Timed calls after the warm-up, for every row of the GPU tables.
pub const REPETITIONS: u32 = 5;
/// The split reduction's timed calls: a 2 GiB reduction takes under a millisecond, so the
/// final synchronization of every device (tens of µs) would otherwise weigh on the ratio.
pub const SPLIT_REPETITIONS: u32 = 20;
/// The ring's launch on each device in the timing table: enough blocks of 512 threads to fill
/// an H100's 132 multiprocessors twice.
pub const TIMING_RING_SHAPE: LaunchShape = LaunchShape::linear(264, 512);
/// The timed reductions' launch on each device: 8 blocks of 256 threads per multiprocessor of
/// an H100 (132), one block sum each.
pub const TIMING_SPLIT_SHAPE: LaunchShape = LaunchShape::linear(1056, 256);
/// The largest all-reduce in the timing table, in floats per device: 1 GiB.
pub const MAX_TIMING_LEN: u64 = 1 << 28;

#[derive(Debug, Clone)]
pub struct Options {
    pub seed: u64,
    pub variant: Option<String>,
    /// Floats per device in the headline all-reduce timing: 2²⁶ (256 MiB) by default.
    pub timing_len: u64,
    pub out: PathBuf,
}

impl Options {
    pub fn new(seed: u64, out: PathBuf) -> Self {
        Self {
            seed,
            variant: None,
            timing_len: 1 << 26,
            out,
        }
    }
}

/// Writes the walk-through to `out`; the GPU table goes to `options.out`.
pub fn walkthrough(gpus: &mut Gpus, options: &Options, out: &mut dyn Write) -> Result<()> {
    let mut page = String::new();
    let on_gpu = gpus.kind().is_cuda();
    let (split_len, ring_len) = if on_gpu {
        (GPU_SPLIT_LEN, GPU_RING_LEN)
    } else {
        (EMULATOR_SPLIT_LEN, EMULATOR_RING_LEN)
    };
    let devices = gpus.count();
    opening(
        &mut page,
        gpus,
        &[
            &format!(
                "seed {} · split reduction: {split_len} values uniform in [−1, 1) · all-reduce: {devices} devices × {ring_len} values",
                options.seed
            ),
            &peer_line(gpus)?,
        ],
        &options.out,
        out,
    )?;
    let data = values(split_len, options.seed);
    let ring_inputs = inputs(devices, ring_len, options.seed);
    for (number, variant) in selected(VARIANTS, options.variant.as_deref())? {
        heading(&mut page, number, variant);
        match variant.kind {
            kind if kind.is_split_reduction() => split_step(gpus, variant, &data, &mut page)?,
            Step::FlagRing { same_order } => flag_ring_step(
                gpus,
                variant,
                same_order,
                &ring_inputs,
                options.seed,
                &mut page,
            )?,
            _ => ring_step(gpus, variant, &ring_inputs, &mut page)?,
        }
        flush(&mut page, out)?;
    }
    if options.variant.is_none() {
        say(&mut page, "");
        timing_section(gpus, options, &mut page)?;
        flush(&mut page, out)?;
    }
    Ok(())
}

/// Which devices can reach which directly.
fn peer_line(gpus: &Gpus) -> Result<String> {
    let devices = gpus.count();
    let mut pairs = Vec::new();
    for from in 0..devices {
        for to in 0..devices {
            if from != to && gpus.can_access_peer(from, to)? {
                pairs.push(format!("{from}→{to}"));
            }
        }
    }
    Ok(if pairs.is_empty() {
        "peer access: none (copies still work, through the host)".to_string()
    } else {
        format!("peer access possible: {}", pairs.join(" "))
    })
}

fn split_step(
    gpus: &mut Gpus,
    variant: &Ch8Variant,
    data: &[f32],
    page: &mut String,
) -> Result<()> {
    let devices = gpus.count();
    let reduction = split_reduction(gpus, variant, data, SPLIT_SHAPE)?;
    let depth = split_depth(
        variant.kind,
        data.len(),
        devices,
        SPLIT_SHAPE,
        FINAL_THREADS,
    );
    let check = SumCheck::new(reduction.total, data, depth);
    let finish = match variant.kind {
        Step::SplitOnHost => "the host adds the block sums".to_string(),
        Step::GatherByCopies => format!(
            "{} peer copies into device 0, then 1 block of {FINAL_THREADS} threads there",
            devices - 1
        ),
        _ => format!("1 block of {FINAL_THREADS} threads on device 0 reads every device's sums"),
    };
    say(
        page,
        &format!(
            "{devices} devices × {SPLIT_SHAPE}, about {} values each; {finish}",
            data.len().div_ceil(devices)
        ),
    );
    say(page, &check.to_string());
    checker_section(gpus, variant, &reduction.report.findings, page);
    if variant.kind == Step::SumOverPeers && !gpus.kind().is_cuda() {
        without_peer_access(variant, data, page)?;
    }
    Ok(())
}

/// The same kernel on fresh devices that never enabled peer access: on a GPU the load faults;
/// the emulator says which device's memory was touched from where. Never run on a GPU.
fn without_peer_access(variant: &Ch8Variant, data: &[f32], page: &mut String) -> Result<()> {
    let mut gpus = Gpus::open(harness::BackendChoice::Emu, 2, 2)?;
    gpus.set_emu_settings(EmuSettings::default());
    let sums: Vec<_> = (0..2)
        .map(|device| gpus.upload(device, &data[..4], &format!("sums{device}")))
        .collect::<Result<_>>()?;
    let addresses: Vec<u64> = sums
        .iter()
        .map(|b| gpus.address(b))
        .collect::<Result<_>>()?;
    let table = gpus.upload(0, &addresses, "sums_of")?;
    let total = gpus.zeros::<f32>(0, 1, "total")?;
    let stream = gpus.stream(0)?;
    gpus.launch_on(
        &stream,
        &variant.kernel,
        LaunchShape::linear(1, 32),
        &[(&table).into(), Arg::U32(2), Arg::U32(4), (&total).into()],
    )?;
    let report = gpus.synchronize()?;
    say(
        page,
        "without cudaDeviceEnablePeerAccess (emulator only; a GPU faults):",
    );
    for finding in report.findings.iter().take(1) {
        for line in finding.to_string().lines() {
            say(page, &format!("  {line}"));
        }
    }
    Ok(())
}

fn ring_step(
    gpus: &mut Gpus,
    variant: &Ch8Variant,
    ring_inputs: &[Vec<f32>],
    page: &mut String,
) -> Result<()> {
    let ranks = ring_inputs.len();
    let n = ring_inputs.first().map_or(0, Vec::len);
    let steps = ranks.saturating_sub(1);
    let outcome = all_reduce(gpus, variant, ring_inputs, RING_SHAPE)?;
    let (what, check) = match variant.kind {
        Step::ReduceScatter => (
            format!("{steps} reduce-scatter step(s); device r holds chunk r + 1 summed"),
            reduce_scatter_check(&outcome.outputs, ring_inputs),
        ),
        _ => (
            format!("{steps} reduce-scatter and {steps} all-gather step(s)"),
            AllReduceCheck::new(&outcome.outputs, ring_inputs),
        ),
    };
    say(
        page,
        &format!(
            "{ranks} devices × {RING_SHAPE} per step, {n} values per device in chunks of {}–{}; {what}",
            n / ranks.max(1),
            n.div_ceil(ranks.max(1))
        ),
    );
    say(page, &check.to_string());
    if variant.name == "ring-wrong-offset" {
        let even = n - n % ranks.max(1);
        let even_inputs: Vec<Vec<f32>> = ring_inputs.iter().map(|x| x[..even].to_vec()).collect();
        let outcome = all_reduce(gpus, variant, &even_inputs, RING_SHAPE)?;
        say(
            page,
            &format!(
                "with {even} values, a multiple of {ranks}: {}",
                AllReduceCheck::new(&outcome.outputs, &even_inputs)
            ),
        );
    }
    if variant.expect == harness::Expect::Race && gpus.kind().is_cuda() {
        race_trials(gpus, variant, page)?;
    }
    checker_section(gpus, variant, &outcome.report.findings, page);
    Ok(())
}

/// The race on real GPUs: the same all-reduce, many times, counting the runs whose sums came
/// out wrong. The emulator names the race on every run; hardware shows it only when the
/// predecessor's step happens to be late.
fn race_trials(gpus: &mut Gpus, variant: &Ch8Variant, page: &mut String) -> Result<()> {
    let ranks = gpus.count();
    let mut rows = Vec::new();
    for (n, trials) in RACE_TRIALS {
        let mut wrong = 0;
        for trial in 0..trials {
            let data = inputs(ranks, n, trial as u64);
            let outcome = all_reduce(gpus, variant, &data, RING_SHAPE)?;
            if !AllReduceCheck::new(&outcome.outputs, &data).is_right() {
                wrong += 1;
            }
        }
        rows.push(format!("{wrong} of {trials} wrong at {n} values"));
    }
    say(
        page,
        &format!("run again and again on these GPUs: {}", rows.join(", ")),
    );
    let (late, wrong) = late_predecessor_trials(gpus, variant)?;
    say(
        page,
        &format!(
            "and when device {late} starts late (busy first with a 1 GiB sum): {wrong} of {LATE_TRIALS} wrong at {LATE_LEN} values"
        ),
    );
    Ok(())
}

/// The race made likely: the last device, which device 0 reads from, first sums 1 GiB on the
/// ring's stream, so device 0's all-gather copies its chunk long before it is summed.
fn late_predecessor_trials(gpus: &mut Gpus, variant: &Ch8Variant) -> Result<(usize, u32)> {
    let ranks = gpus.count();
    let late = ranks - 1;
    let busy_len: usize = 1 << 28;
    let busy = gpus.zeros::<f32>(late, busy_len, "busy")?;
    let busy_sums = gpus.zeros::<f32>(late, TIMING_SPLIT_SHAPE.grid.x as usize, "busy_sums")?;
    let busy_kernel = crate::variant("split-on-host").kernel;
    let mut wrong = 0;
    for trial in 0..LATE_TRIALS {
        let data = inputs(ranks, LATE_LEN, u64::from(trial));
        let mut buffers = data
            .iter()
            .enumerate()
            .map(|(rank, input)| gpus.upload(rank, input, &format!("data{rank}")))
            .collect::<Result<Vec<_>>>()?;
        let ring = Ring::new(gpus)?;
        gpus.launch_on(
            &ring.streams[late],
            &busy_kernel,
            TIMING_SPLIT_SHAPE,
            &[
                (&busy).into(),
                Arg::U64(busy_len as u64),
                (&busy_sums).into(),
            ],
        )?;
        ring.run(gpus, variant, &mut buffers, RING_SHAPE)?;
        gpus.synchronize()?;
        let outputs = buffers
            .iter()
            .map(|buffer| gpus.download(buffer))
            .collect::<Result<Vec<_>>>()?;
        if !AllReduceCheck::new(&outputs, &data).is_right() {
            wrong += 1;
        }
    }
    Ok((late, wrong))
}

fn flag_ring_step(
    gpus: &mut Gpus,
    variant: &Ch8Variant,
    same_order: bool,
    a: &[Vec<f32>],
    seed: u64,
    page: &mut String,
) -> Result<()> {
    let ranks = a.len();
    let n = a.first().map_or(0, Vec::len);
    let orders: Vec<String> = (0..ranks.min(4))
        .map(|rank| {
            let [first, second] = collective_order(rank, same_order);
            format!("{rank}: {} {}", COLLECTIVES[first], COLLECTIVES[second])
        })
        .collect();
    say(
        page,
        &format!(
            "{ranks} devices × {RING_SHAPE} per step; all-reduces A and B of {n} values, {} steps each; rank r waits for flags<r>[A or B] ≥ its step, and its predecessor sets it",
            2 * ranks.saturating_sub(1),
        ),
    );
    say(
        page,
        &format!(
            "order per rank: {}{}",
            orders.join(" · "),
            if ranks > 4 { " · …" } else { "" }
        ),
    );
    if let Err(refused) = gpus.ensure_can_run(variant) {
        say(
            page,
            &format!("not run: {refused}; --backend emu shows where each device stops"),
        );
        say(page, &host_bug_line());
        return Ok(());
    }
    let b = inputs(ranks, n, !seed);
    let outcome = two_all_reduces(gpus, variant, [a, &b], RING_SHAPE)?;
    let left = if same_order {
        ""
    } else {
        " (as the streams left it)"
    };
    for (name, (outputs, data)) in COLLECTIVES.iter().zip(outcome.outputs.iter().zip([a, &b])) {
        say(
            page,
            &format!("{name}{left}: {}", AllReduceCheck::new(outputs, data)),
        );
    }
    checker_section(gpus, variant, &outcome.report.findings, page);
    if !same_order {
        say(
            page,
            "flags<r>[0] is A's, flags<r>[1] is B's: every device stopped in the collective it issued first, waiting, through the ring, on a device that issued the other one first",
        );
        say(page, &host_bug_line());
    }
    Ok(())
}

/// `collectives-out-of-order`'s bug is in the host's order, not in its kernel (08's).
fn host_bug_line() -> String {
    format!(
        "the // BUG: line is {} (the host's order of collectives; the kernel is 08's)",
        host_bug_location()
    )
}

/// The ring against the device copy and, on GPUs, the time of one GPU's share of the split.
fn timing_section(gpus: &mut Gpus, options: &Options, page: &mut String) -> Result<()> {
    say(page, "## GPU timing");
    if !gpus.kind().is_cuda() {
        say(
            page,
            &timing_skipped(
                "the ring all-reduce's bus bandwidth from 1 MiB to 1 GiB against NCCL's ncclAllReduce, what a read through peer access costs against one of a device's own memory, and the split reduction's speed-up over one GPU",
            ),
        );
        return Ok(());
    }
    let ranks = gpus.count();
    let mut rows = Vec::new();
    let headline = options.timing_len.clamp(1, MAX_TIMING_LEN) as usize;
    let mut sizes: Vec<usize> = (0..6).map(|i| (1usize << 18) << (2 * i)).collect();
    if !sizes.contains(&headline) {
        sizes.push(headline);
        sizes.sort_unstable();
    }
    sizes.retain(|&n| n as u64 <= MAX_TIMING_LEN);
    let all = variant("ring-all-reduce");
    let mut nccl_missing = None;
    let nccl_times = gpus.time_nccl_all_reduce_ms(&sizes, REPETITIONS)?;
    let ring = Ring::new(gpus)?;
    for (&n, nccl) in sizes.iter().zip(nccl_times) {
        let mut buffers = (0..ranks)
            .map(|rank| gpus.zeros::<f32>(rank, n, "data"))
            .collect::<Result<Vec<_>>>()?;
        let ms = gpus.time_ms(REPETITIONS, |gpus| {
            ring.run(gpus, all, &mut buffers, TIMING_RING_SHAPE)
        })?;
        drop(buffers);
        let Some(ms) = ms else { continue };
        let bytes = (n * 4) as f64;
        let bus = |ms: f64| bytes / (ms * 1e6) * 2.0 * (ranks as f64 - 1.0) / ranks as f64;
        let (nccl_ms, nccl_bus, ratio) = match &nccl {
            VendorTiming::Ms(nccl_ms) => (
                format!("{nccl_ms:.3}"),
                format!("{:.1}", bus(*nccl_ms)),
                format!("{:.2}×", bus(ms) / bus(*nccl_ms)),
            ),
            VendorTiming::Unavailable(why) => {
                nccl_missing.get_or_insert_with(|| why.clone());
                ("—".into(), "—".into(), "—".into())
            }
        };
        rows.push(vec![
            format!("{} MiB", (n * 4) >> 20),
            format!("{ms:.3}"),
            format!("{:.1}", bytes / (ms * 1e6)),
            format!("{:.1}", bus(ms)),
            nccl_ms,
            nccl_bus,
            ratio,
        ]);
    }
    let ring_table = table(
        &[
            "floats per device",
            "ring ms",
            "ring algbw GB/s",
            "ring busbw GB/s",
            "NCCL ms",
            "NCCL busbw GB/s",
            "ring / NCCL busbw",
        ],
        rows,
    );
    say(
        page,
        &format!("ring all-reduce on {ranks} GPUs, one stream each:"),
    );
    say(page, &ring_table);
    if let Some(why) = nccl_missing {
        say(page, &format!("NCCL: {why}"));
    }
    let peer = peer_cost(gpus)?;
    say(page, &peer);
    let split = split_speedup(gpus)?;
    say(page, &split);
    let tables = format!("{ring_table}\n\n{peer}\n\n{split}");
    let file = write_gpu_table(
        &options.out,
        gpus.name(),
        "cargo run --release -p ch8-many-gpus",
        "host clock around 5 repetitions after a warm-up (20 for the split reduction), every device synchronized; busbw = algbw · 2(N − 1)/N as nccl-tests defines it; NCCL's ncclAllReduce in place, one communicator per GPU from ncclCommInitAll",
        &tables,
    )?;
    say(page, &format!("table written to {}", file.display()));
    Ok(())
}

/// What peer access costs: device 0 sums 256 MiB of floats held in its own memory, then the
/// same amount held in device 1's (read through peer access), against a peer copy of it.
fn peer_cost(gpus: &mut Gpus) -> Result<String> {
    let n: usize = 1 << 26;
    let bytes = (n * 4) as f64;
    let kernel = variant("split-on-host").kernel;
    let shape = TIMING_SPLIT_SHAPE;
    let mut local = gpus.zeros::<f32>(0, n, "local")?;
    let remote = gpus.zeros::<f32>(1, n, "remote")?;
    let sums = gpus.zeros::<f32>(0, shape.grid.x as usize, "sums")?;
    let stream = gpus.stream(0)?;
    gpus.enable_peer_access(0, 1)?;
    let read = |gpus: &mut Gpus, source: &harness::Buffer<f32>| {
        gpus.time_ms(REPETITIONS, |gpus| {
            gpus.launch_on(
                &stream,
                &kernel,
                shape,
                &[source.into(), Arg::U64(n as u64), (&sums).into()],
            )
        })
    };
    let own = read(gpus, &local)?;
    let peer = read(gpus, &remote)?;
    let copy = gpus.time_ms(REPETITIONS, |gpus| {
        gpus.copy(&stream, &mut local, 0, &remote, 0, n)
    })?;
    let mut rows = Vec::new();
    for (what, ms) in [
        ("device 0 sums its own memory", own),
        ("device 0 sums device 1's, by peer access", peer),
        ("peer copy, device 1 → device 0", copy),
    ] {
        if let (Some(ms), Some(own)) = (ms, own) {
            rows.push(vec![
                what.to_string(),
                format!("{ms:.3}"),
                format!("{:.1}", bytes / (ms * 1e6)),
                format!("{:.2}×", own / ms),
            ]);
        }
    }
    Ok(format!(
        "what peer access costs, 256 MiB:\n{}",
        table(&["read", "ms", "GB/s", "vs own memory"], rows)
    ))
}

/// The split reduction of 2 GiB of floats on device 0 alone, then over every device.
fn split_speedup(gpus: &mut Gpus) -> Result<String> {
    let n: usize = 1 << 29;
    let devices = gpus.count();
    let kernel = variant("split-on-host").kernel;
    let shape = TIMING_SPLIT_SHAPE;
    let mut slices = Vec::new();
    let mut sums = Vec::new();
    let mut streams = Vec::new();
    for device in 0..devices {
        let len = chunk_begin(n, device + 1, devices) - chunk_begin(n, device, devices);
        slices.push(gpus.zeros::<f32>(device, len, "slice")?);
        sums.push(gpus.zeros::<f32>(device, shape.grid.x as usize, "sums")?);
        streams.push(gpus.stream(device)?);
    }
    let whole = gpus.zeros::<f32>(0, n, "whole")?;
    let one = gpus.time_ms(SPLIT_REPETITIONS, |gpus| {
        gpus.launch_on(
            &streams[0],
            &kernel,
            shape,
            &[(&whole).into(), Arg::U64(n as u64), (&sums[0]).into()],
        )
    })?;
    drop(whole);
    let many = gpus.time_ms(SPLIT_REPETITIONS, |gpus| {
        for device in 0..devices {
            gpus.launch_on(
                &streams[device],
                &kernel,
                shape,
                &[
                    (&slices[device]).into(),
                    Arg::U64(slices[device].len() as u64),
                    (&sums[device]).into(),
                ],
            )?;
        }
        Ok(())
    })?;
    Ok(match (one, many) {
        (Some(one), Some(many)) => format!(
            "split reduction of 2 GiB: 1 GPU {one:.3} ms, {devices} GPUs {many:.3} ms — {:.2}× the throughput",
            one / many
        ),
        _ => "split reduction: not timed".to_string(),
    })
}
