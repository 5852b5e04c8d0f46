//! Elements per second and thread-instructions per second of `reduce_better` (grid-stride partial
//! sums, then a 1024-thread shared-memory tree per block) on the emulator, with the checkers off,
//! with racecheck alone, and with all checkers. Each sum is checked against an f64 CPU sum.
//! `emu/BENCHMARK.md` compares these numbers with Numba's CUDA simulator.
//!
//! ```text
//! cargo run --release -p ptx-emu --example throughput            # the BENCHMARK.md runs
//! cargo run --release -p ptx-emu --example throughput -- N GRID   # one size and grid
//! cargo run --release -p ptx-emu --example throughput -- N GRID off # ... and one checker setting
//! cargo run --release -p ptx-emu --example throughput -- N GRID off 65536 # ... and resident threads
//! ```
//!
//! GRID 0 means one element per thread (`N / 1024` blocks). After the table, a second one says
//! where each median launch's time went (`Emulator::last_launch_timings`): on the launch's
//! thread, running blocks (interpreter), the race detector, joining turns run on several cores,
//! and waiting for them; and each thread's busy time.

use ptx_emu::{Emulator, KernelArg, LaunchConfig, LaunchTimings, Module, RunOptions};
use std::error::Error;
use std::time::Instant;

/// Threads per block: `THREADS_PER_BLOCK` in `reduce_better.cu`.
const TPB: u32 = 1024;
/// Launches per configuration; the table shows the median.
const REPEATS: usize = 3;

fn checker_configs() -> [(&'static str, RunOptions); 3] {
    let off = RunOptions {
        racecheck: false,
        synccheck: false,
        memcheck: false,
        step_budget: u64::MAX,
        ..RunOptions::default()
    };
    [
        ("off", off),
        (
            "racecheck",
            RunOptions {
                racecheck: true,
                ..off
            },
        ),
        (
            "all",
            RunOptions {
                step_budget: u64::MAX,
                ..RunOptions::default()
            },
        ),
    ]
}

/// Deterministic floats in [0, 1), so the sum has no exact-integer luck in it.
fn input(n: usize) -> Vec<f32> {
    let mut s = 0x2545_F491_4F6C_DD1Du64;
    (0..n)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            (s >> 40) as f32 / (1u64 << 24) as f32
        })
        .collect()
}

/// Nanoseconds this process's main thread has been on a CPU (Linux), to tell a busy machine's
/// waiting from the emulator's own work. The main thread is the interpreter; with two or more
/// cores (`RACETRACK_THREADS`) racecheck runs on a thread of its own, not counted here.
fn cpu_ns() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/self/schedstat").ok()?;
    text.split_whitespace().next()?.parse().ok()
}

struct Run {
    secs: f64,
    cpu_secs: Option<f64>,
    thread_instructions: u64,
    findings: usize,
    timings: Option<LaunchTimings>,
}

fn run(module: &Module, x: &[f32], grid: u32, opts: &RunOptions) -> Result<Run, Box<dyn Error>> {
    let n = x.len();
    let mut emu = Emulator::new();
    let dx = emu.alloc(n * 4, "x");
    let bytes: Vec<u8> = x.iter().flat_map(|v| v.to_le_bytes()).collect();
    emu.write(dx, &bytes)?;
    let dp = emu.alloc(grid as usize * 4, "partial");
    let cfg = LaunchConfig {
        grid: [grid, 1, 1],
        block: [TPB, 1, 1],
        dynamic_shared_bytes: 0,
    };
    let args = [
        KernelArg::Ptr(dx),
        KernelArg::U32(u32::try_from(n)?),
        KernelArg::Ptr(dp),
    ];
    let cpu0 = cpu_ns();
    let t = Instant::now();
    let report = emu.launch(module, "reduce_better", &cfg, &args, opts)?;
    let secs = t.elapsed().as_secs_f64();
    let cpu_secs = cpu0
        .zip(cpu_ns())
        .map(|(a, b)| b.saturating_sub(a) as f64 / 1e9);
    if !report.completed {
        return Err(format!("launch did not complete: {:?}", report.findings).into());
    }
    let mut out = vec![0u8; grid as usize * 4];
    emu.read(dp, &mut out)?;
    let got: f64 = out
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]) as f64)
        .sum();
    let want: f64 = x.iter().map(|&v| v as f64).sum();
    if (got - want).abs() > 1e-5 * want.abs().max(1.0) {
        return Err(format!("sum {got} but the CPU says {want}").into());
    }
    Ok(Run {
        secs,
        cpu_secs,
        thread_instructions: report.thread_instructions,
        findings: report.findings.len(),
        timings: emu.last_launch_timings().cloned(),
    })
}

fn main() -> Result<(), Box<dyn Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let only = args.get(2).cloned();
    // More resident blocks give more cores a block each (see BENCHMARK.md, "Stretches").
    let resident: Option<u32> = args
        .get(3)
        .map(|r| {
            r.parse()
                .map_err(|_| format!("RESIDENT_THREADS must be a whole number, not {r:?}"))
        })
        .transpose()?;
    let cases: Vec<(usize, u32)> = match args.as_slice() {
        [] => vec![
            // One element per thread: as many blocks as the input needs. 2^22 would need more
            // register memory than the emulator allows (2 GiB).
            (1 << 14, 0),
            (1 << 15, 0),
            (1 << 16, 0),
            (1 << 18, 0),
            (1 << 20, 0),
            // A fixed grid and a grid-stride loop: many elements per thread.
            (1 << 20, 16),
            (1 << 22, 16),
            (1 << 22, 1),
            // The grid of the Numba book's reduce_better on an 80-SM GPU: 32 blocks per SM.
            (1 << 22, 32 * 80),
        ],
        [n, g] | [n, g, _] | [n, g, _, _] => vec![(n.parse()?, g.parse()?)],
        _ => {
            return Err(
                "usage: throughput [N GRID [off|racecheck|all [RESIDENT_THREADS]]]   (GRID 0: N / 1024 blocks)".into(),
            );
        }
    };
    let t = Instant::now();
    let module = Module::parse(include_str!("../tests/corpus/reduce_better.ptx"))?;
    println!(
        "reduce_better, {TPB} threads per block; PTX parsed in {:.2} ms",
        t.elapsed().as_secs_f64() * 1e3
    );
    println!(
        "median of {REPEATS} launches; wall = elapsed time, cpu = this thread's time on a CPU"
    );
    println!(
        "| elements | blocks | checkers | thread-instructions | wall s | cpu s | elements/s | thread-instructions/s | findings |"
    );
    println!("|---:|---:|---|---:|---:|---:|---:|---:|---:|");
    let mut breakdowns = Vec::new();
    for (n, grid) in cases {
        let grid = if grid == 0 {
            u32::try_from(n.div_ceil(TPB as usize))?
        } else {
            grid
        };
        let x = input(n);
        for (name, opts) in checker_configs() {
            if only.as_ref().is_some_and(|o| o != name) {
                continue;
            }
            let opts = RunOptions {
                resident_threads: resident.unwrap_or(opts.resident_threads),
                ..opts
            };
            let mut runs = (0..REPEATS)
                .map(|_| run(&module, &x, grid, &opts))
                .collect::<Result<Vec<_>, _>>()?;
            runs.sort_by(|a, b| a.secs.total_cmp(&b.secs));
            let r = &runs[runs.len() / 2];
            let cpu = r
                .cpu_secs
                .map_or_else(|| "?".to_string(), |c| format!("{c:.3}"));
            println!(
                "| {n} | {grid} | {name} | {} | {:.3} | {cpu} | {:.3e} | {:.3e} | {} |",
                r.thread_instructions,
                r.secs,
                n as f64 / r.secs,
                r.thread_instructions as f64 / r.secs,
                r.findings
            );
            if let Some(t) = &r.timings {
                breakdowns.push(breakdown(n, grid, name, t));
            }
        }
    }
    println!();
    println!(
        "where the median launches' time went, ms (on the launch's thread; busy: every thread's time at work, the launch's first)"
    );
    println!(
        "| elements | blocks | checkers | launch | interpreter | race detector | joins | waiting | other | turns | rounds on one core | busy per thread | cores' worth | waits for others' blocks | workers held up | workers starting turns | between turns | segments taken over |"
    );
    println!(
        "|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|---|---|---:|---:|"
    );
    for row in breakdowns {
        println!("{row}");
    }
    Ok(())
}

/// One row of the second table.
fn breakdown(n: usize, grid: u32, checkers: &str, t: &LaunchTimings) -> String {
    let ms = |d: std::time::Duration| format!("{:.1}", d.as_secs_f64() * 1e3);
    let busy: Vec<String> = t.threads.iter().map(|b| ms(b.busy)).collect();
    let workers: Vec<&ptx_emu::ThreadBusy> = t
        .threads
        .iter()
        .filter(|b| b.name.starts_with("launch worker"))
        .collect();
    let held_up: Vec<String> = workers.iter().map(|b| ms(b.held_up)).collect();
    let starting: Vec<String> = workers.iter().map(|b| ms(b.starting)).collect();
    format!(
        "| {n} | {grid} | {checkers} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {:.2} | {} | {} | {} | {} | {} |",
        ms(t.total),
        ms(t.interpreter),
        ms(t.race_detector),
        ms(t.joins),
        ms(t.waiting),
        ms(t.other()),
        t.turns,
        t.serial_rounds,
        busy.join(" "),
        t.cores_busy(),
        t.waits,
        held_up.join(" "),
        starting.join(" "),
        ms(t.between_turns),
        t.taken_over
    )
}
