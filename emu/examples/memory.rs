//! Peak memory and time of large launches, with the checkers off and on: the table in
//! `emu/BENCHMARK.md` ("Memory").
//!
//! ```text
//! cargo run --release -p ptx-emu --example memory            # every case, each in its own process
//! cargo run --release -p ptx-emu --example memory -- CASE    # one case (names: run with `list`)
//! ```
//!
//! Each case runs in a fresh process, so that its peak resident set (`VmHWM` in
//! `/proc/self/status`) is its own. Buffers are filled and checked a megabyte at a time, so the
//! host holds no copy of them: the peak is the emulator's (device memory, shadows, threads).
//! "allocated" is the sum of the kernel's buffers; "ratio" is peak ÷ allocated.

use ptx_emu::{DevicePtr, Emulator, KernelArg, LaunchConfig, Module, RunOptions};
use std::error::Error;
use std::time::Instant;

const CHUNK: usize = 1 << 20;

#[derive(Clone, Copy)]
enum Kernel {
    /// `y = 2x + y`, one element per thread.
    Saxpy,
    /// `reduce_better`: a grid-stride sum into one float per block (1024 threads per block).
    Reduce,
    /// One Game of Life step, bytes, 16 × 16 blocks.
    Life,
    /// `out[index[i]] = x[i]` with a scrambled permutation: writes land anywhere.
    Scatter,
}

#[derive(Clone, Copy)]
struct Case {
    name: &'static str,
    kernel: Kernel,
    /// Elements (cells for Life: a square of this many).
    n: usize,
    /// Blocks (1D); 0 means one element per thread.
    grid: u32,
    checkers: Checkers,
}

#[derive(Clone, Copy, PartialEq)]
enum Checkers {
    Off,
    Race,
    All,
}

impl Checkers {
    fn name(self) -> &'static str {
        match self {
            Checkers::Off => "off",
            Checkers::Race => "racecheck",
            Checkers::All => "all",
        }
    }
    fn options(self) -> RunOptions {
        let all = RunOptions {
            step_budget: u64::MAX,
            ..RunOptions::default()
        };
        match self {
            Checkers::All => all,
            Checkers::Race => RunOptions {
                synccheck: false,
                memcheck: false,
                ..all
            },
            Checkers::Off => RunOptions {
                racecheck: false,
                synccheck: false,
                memcheck: false,
                ..all
            },
        }
    }
}

const M16: usize = 1 << 24;
const GRID_MAX: usize = 65_535 * 1024;

fn cases() -> Vec<Case> {
    use Checkers::*;
    use Kernel::*;
    let mut v = Vec::new();
    let mut add = |name, kernel, n, grid, checkers: &[Checkers]| {
        for &checkers in checkers {
            v.push(Case {
                name,
                kernel,
                n,
                grid,
                checkers,
            });
        }
    };
    add("saxpy-64MiB", Saxpy, M16, 0, &[Off, Race, All]);
    add("saxpy-65535x1024", Saxpy, GRID_MAX, 0, &[Off, All]);
    add("reduce-64MiB", Reduce, M16, 0, &[Off, Race, All]);
    add("reduce-64MiB-2560", Reduce, M16, 2560, &[Race, All]);
    add("life-4096x4096", Life, 4096 * 4096, 0, &[Off, All]);
    add("scatter-16MiB", Scatter, 1 << 22, 0, &[Off, All]);
    v
}

fn status_kib(field: &str) -> Option<u64> {
    let text = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = text.lines().find(|l| l.starts_with(field))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

fn cpu_ns() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/self/schedstat").ok()?;
    text.split_whitespace().next()?.parse().ok()
}

/// Fills `len` elements of 4 bytes at `ptr`, a megabyte at a time.
fn fill(
    emu: &mut Emulator,
    ptr: DevicePtr,
    len: usize,
    value: impl Fn(usize) -> [u8; 4],
) -> Result<(), Box<dyn Error>> {
    let mut buf = Vec::with_capacity(CHUNK);
    let per = CHUNK / 4;
    for start in (0..len).step_by(per) {
        buf.clear();
        for i in start..(start + per).min(len) {
            buf.extend_from_slice(&value(i));
        }
        emu.write(DevicePtr(ptr.0 + start as u64 * 4), &buf)?;
    }
    Ok(())
}

/// Calls `check(i, element)` for `len` elements of 4 bytes at `ptr`, a megabyte at a time.
fn scan(
    emu: &Emulator,
    ptr: DevicePtr,
    len: usize,
    mut check: impl FnMut(usize, [u8; 4]),
) -> Result<(), Box<dyn Error>> {
    let per = CHUNK / 4;
    let mut buf = vec![0u8; CHUNK];
    for start in (0..len).step_by(per) {
        let count = per.min(len - start);
        emu.read(DevicePtr(ptr.0 + start as u64 * 4), &mut buf[..count * 4])?;
        for (k, c) in buf[..count * 4].chunks_exact(4).enumerate() {
            check(start + k, [c[0], c[1], c[2], c[3]]);
        }
    }
    Ok(())
}

/// A permutation of 0..n with no locality: multiplication by an odd constant modulo a power of
/// two.
fn scrambled(i: usize, n: usize) -> usize {
    (i.wrapping_mul(2_654_435_761)) & (n - 1)
}

fn linear(grid: u32, block: u32) -> LaunchConfig {
    LaunchConfig {
        grid: [grid, 1, 1],
        block: [block, 1, 1],
        dynamic_shared_bytes: 0,
    }
}

type Verify = Box<dyn Fn(&Emulator) -> Result<String, Box<dyn Error>>>;

/// A case's launch, before it runs.
struct Setup {
    module: Module,
    entry: &'static str,
    cfg: LaunchConfig,
    args: Vec<KernelArg>,
    /// Bytes of the kernel's buffers.
    allocated: u64,
    /// Checks the output against the CPU; says how it went.
    verify: Verify,
}

struct Outcome {
    allocated: u64,
    secs: f64,
    cpu_secs: f64,
    findings: usize,
    shadow_bytes: u64,
    check: String,
}

fn run(case: &Case) -> Result<Outcome, Box<dyn Error>> {
    let mut emu = Emulator::new();
    let n = case.n;
    let opts = case.checkers.options();
    let f = |x: f32| x.to_le_bytes();
    let setup = match case.kernel {
        Kernel::Saxpy => {
            let x = emu.alloc(n * 4, "x");
            let y = emu.alloc(n * 4, "y");
            fill(&mut emu, x, n, |i| f((i % 1000) as f32))?;
            fill(&mut emu, y, n, |i| f((i % 7) as f32))?;
            let grid = u32::try_from(n.div_ceil(1024))?;
            Setup {
                module: Module::parse(include_str!("../tests/corpus/saxpy.ptx"))?,
                entry: "saxpy",
                cfg: linear(grid, 1024),
                args: vec![
                    KernelArg::F32(2.0),
                    KernelArg::Ptr(x),
                    KernelArg::Ptr(y),
                    KernelArg::I32(i32::try_from(n)?),
                ],
                allocated: (n * 8) as u64,
                verify: Box::new(move |emu| {
                    let mut wrong = 0usize;
                    scan(emu, y, n, |i, b| {
                        let want = 2.0 * (i % 1000) as f32 + (i % 7) as f32;
                        wrong += usize::from(f32::from_le_bytes(b) != want);
                    })?;
                    Ok(format!("{wrong} wrong"))
                }),
            }
        }
        Kernel::Reduce => {
            let grid = if case.grid == 0 {
                u32::try_from(n.div_ceil(1024))?
            } else {
                case.grid
            };
            let x = emu.alloc(n * 4, "x");
            let partial = emu.alloc(grid as usize * 4, "partial");
            fill(&mut emu, x, n, |i| f((i % 4) as f32))?;
            let want: f64 = (0..n).map(|i| (i % 4) as f64).sum();
            Setup {
                module: Module::parse(include_str!("../tests/corpus/reduce_better.ptx"))?,
                entry: "reduce_better",
                cfg: linear(grid, 1024),
                args: vec![
                    KernelArg::Ptr(x),
                    KernelArg::U32(u32::try_from(n)?),
                    KernelArg::Ptr(partial),
                ],
                allocated: (n * 4 + grid as usize * 4) as u64,
                verify: Box::new(move |emu| {
                    let mut got = 0f64;
                    scan(emu, partial, grid as usize, |_, b| {
                        got += f32::from_le_bytes(b) as f64;
                    })?;
                    Ok(if got == want {
                        "sum exact".into()
                    } else {
                        format!("sum {got}, want {want}")
                    })
                }),
            }
        }
        Kernel::Life => {
            let side = (n as f64).sqrt() as usize;
            let cells = side * side;
            let inp = emu.alloc(cells, "in");
            let out = emu.alloc(cells, "out");
            // Vertical bars of three cells: every one becomes a horizontal bar (a blinker).
            let alive = move |i: usize| (i % side) % 4 == 1 && !(i / side).is_multiple_of(4);
            fill(&mut emu, inp, cells / 4, |w| {
                std::array::from_fn(|k| u8::from(alive(w * 4 + k)))
            })?;
            let blocks = u32::try_from(side.div_ceil(16))?;
            let next = move |i: usize| {
                let (x, y) = ((i % side) as isize, (i / side) as isize);
                let s = side as isize;
                let mut around = 0;
                for dy in -1..=1 {
                    for dx in -1..=1 {
                        if (dx, dy) != (0, 0) {
                            let (nx, ny) = ((x + dx + s) % s, (y + dy + s) % s);
                            around += usize::from(alive((ny * s + nx) as usize));
                        }
                    }
                }
                around == 3 || (alive(i) && around == 2)
            };
            Setup {
                module: Module::parse(include_str!("../tests/corpus/life_step.ptx"))?,
                entry: "life_step",
                cfg: LaunchConfig {
                    grid: [blocks, blocks, 1],
                    block: [16, 16, 1],
                    dynamic_shared_bytes: 0,
                },
                args: vec![
                    KernelArg::Ptr(inp),
                    KernelArg::Ptr(out),
                    KernelArg::I32(i32::try_from(side)?),
                    KernelArg::I32(i32::try_from(side)?),
                ],
                allocated: (cells * 2) as u64,
                verify: Box::new(move |emu| {
                    let mut wrong = 0usize;
                    scan(emu, out, cells / 4, |w, b| {
                        for (k, &v) in b.iter().enumerate() {
                            wrong += usize::from((v == 1) != next(w * 4 + k));
                        }
                    })?;
                    Ok(format!("{wrong} wrong"))
                }),
            }
        }
        Kernel::Scatter => {
            let x = emu.alloc(n * 4, "x");
            let index = emu.alloc(n * 4, "index");
            let out = emu.alloc(n * 4, "out");
            fill(&mut emu, x, n, |i| f(i as f32))?;
            fill(&mut emu, index, n, |i| {
                (scrambled(i, n) as i32).to_le_bytes()
            })?;
            let grid = u32::try_from(n.div_ceil(1024))?;
            Setup {
                module: Module::parse(include_str!("../tests/corpus/scatter.ptx"))?,
                entry: "scatter",
                cfg: linear(grid, 1024),
                args: vec![
                    KernelArg::Ptr(x),
                    KernelArg::Ptr(index),
                    KernelArg::Ptr(out),
                    KernelArg::I32(i32::try_from(n)?),
                ],
                allocated: (n * 12) as u64,
                verify: Box::new(move |emu| {
                    let mut seen = 0f64;
                    scan(emu, out, n, |_, b| seen += f32::from_le_bytes(b) as f64)?;
                    let want: f64 = (0..n).map(|i| i as f32 as f64).sum();
                    Ok(if seen == want {
                        "every element once".into()
                    } else {
                        format!("sum {seen}, want {want}")
                    })
                }),
            }
        }
    };
    let cpu0 = cpu_ns();
    let t = Instant::now();
    let report = emu.launch(&setup.module, setup.entry, &setup.cfg, &setup.args, &opts)?;
    let secs = t.elapsed().as_secs_f64();
    let cpu = cpu0
        .zip(cpu_ns())
        .map_or(f64::NAN, |(a, b)| b.saturating_sub(a) as f64 / 1e9);
    if !report.completed {
        return Err(format!("did not complete: {:?}", report.findings.first()).into());
    }
    Ok(Outcome {
        allocated: setup.allocated,
        secs,
        cpu_secs: cpu,
        findings: report.findings.len(),
        shadow_bytes: report.shadow_bytes,
        check: (setup.verify)(&emu)?,
    })
}

fn grid_text(case: &Case) -> String {
    match case.kernel {
        Kernel::Life => {
            let side = (case.n as f64).sqrt() as usize;
            let b = side.div_ceil(16);
            format!("{b} × {b} of 16 × 16")
        }
        _ if case.grid != 0 => format!("{} × 1024", case.grid),
        _ => format!("{} × 1024", case.n.div_ceil(1024)),
    }
}

fn one(name: &str, checkers: &str) -> Result<(), Box<dyn Error>> {
    let case = cases()
        .into_iter()
        .find(|c| c.name == name && c.checkers.name() == checkers)
        .ok_or_else(|| format!("no case {name} {checkers}; run with `list`"))?;
    let before = status_kib("VmRSS:").unwrap_or(0);
    let mib = |b: u64| b as f64 / (1 << 20) as f64;
    match run(&case) {
        Ok(o) => {
            let peak = status_kib("VmHWM:").unwrap_or(0) * 1024;
            println!(
                "| {} | {} | {} | {:.0} | {:.0} | {:.0} | {:.2} | {:.1} | {:.1} | {} | {} |",
                case.name,
                grid_text(&case),
                case.checkers.name(),
                mib(o.allocated),
                mib(o.shadow_bytes),
                mib(peak),
                peak as f64 / o.allocated as f64,
                o.secs,
                o.cpu_secs,
                o.findings,
                o.check
            );
        }
        Err(e) => println!(
            "| {} | {} | {} | | | | | | | | {e} (process started at {} MiB) |",
            case.name,
            grid_text(&case),
            case.checkers.name(),
            before / 1024
        ),
    }
    Ok(())
}

fn main() -> Result<(), Box<dyn Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.as_slice() {
        [] => {
            println!(
                "| case | grid × block | checkers | allocated MiB | race shadow MiB | peak RSS MiB | ratio | launch s | cpu s | findings | result |"
            );
            println!("|---|---|---|---:|---:|---:|---:|---:|---:|---:|---|");
            let exe = std::env::current_exe()?;
            for case in cases() {
                let status = std::process::Command::new(&exe)
                    .args([case.name, case.checkers.name()])
                    .status()?;
                if !status.success() {
                    println!(
                        "| {} | | {} | | | | | | | exit {status} |",
                        case.name,
                        case.checkers.name()
                    );
                }
            }
            Ok(())
        }
        [list] if list == "list" => {
            for case in cases() {
                println!("{} {}", case.name, case.checkers.name());
            }
            Ok(())
        }
        [name, checkers] => one(name, checkers),
        _ => Err("usage: memory [list | CASE CHECKERS]".into()),
    }
}
