//! Thread-instructions per second of a grid-stride saxpy (`tests/corpus/saxpy_grid_stride.cu`,
//! 256 threads per block) on the emulator, checkers off and racecheck alone, the second kernel of
//! `emu/BENCHMARK.md`'s comparison with native C and Oclgrind. The result is checked against
//! the CPU's `fma(a, x, y)` (NVRTC contracts `a * x + y` into `fma.rn.f32`). `RACETRACK_THREADS` sets the cores (default: every core).
//!
//! ```text
//! cargo run --release -p ptx-emu --example saxpy                  # 64 Mi floats, 2560 blocks
//! cargo run --release -p ptx-emu --example saxpy -- N GRID [off|racecheck]
//! ```

use ptx_emu::{Emulator, KernelArg, LaunchConfig, Module, RunOptions};
use std::error::Error;
use std::time::Instant;

const TPB: u32 = 256;
const A: f32 = 2.5;

fn main() -> Result<(), Box<dyn Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (n, grid): (usize, u32) = match args.as_slice() {
        [] => (64 << 20, 2560),
        [n, g] | [n, g, _] => (n.parse()?, g.parse()?),
        _ => return Err("usage: saxpy [N GRID [off|racecheck]]".into()),
    };
    let only = args.get(2).cloned();
    let module = Module::parse(include_str!("../tests/corpus/saxpy_grid_stride.ptx"))?;
    let x: Vec<f32> = (0..n).map(|i| (i % 1000) as f32 * 0.001).collect();
    let y: Vec<f32> = (0..n).map(|i| (i % 7) as f32).collect();
    let off = RunOptions {
        racecheck: false,
        synccheck: false,
        memcheck: false,
        initcheck: false,
        step_budget: u64::MAX,
        ..RunOptions::default()
    };
    let configs = [
        ("off", off),
        (
            "racecheck",
            RunOptions {
                racecheck: true,
                ..off
            },
        ),
    ];
    println!(
        "| elements | blocks | checkers | cores | thread-instructions | wall s | thread-instructions/s |"
    );
    println!("|---:|---:|---|---:|---:|---:|---:|");
    for (name, options) in configs {
        if only.as_ref().is_some_and(|o| o != name) {
            continue;
        }
        let mut emu = Emulator::new();
        let dx = emu.alloc(n * 4, "x");
        let dy = emu.alloc(n * 4, "y");
        let bytes = |v: &[f32]| v.iter().flat_map(|f| f.to_le_bytes()).collect::<Vec<u8>>();
        emu.write(dx, &bytes(&x))?;
        emu.write(dy, &bytes(&y))?;
        let config = LaunchConfig {
            grid: [grid, 1, 1],
            block: [TPB, 1, 1],
            dynamic_shared_bytes: 0,
        };
        let args = [
            KernelArg::F32(A),
            KernelArg::Ptr(dx),
            KernelArg::Ptr(dy),
            KernelArg::U32(u32::try_from(n)?),
        ];
        let t = Instant::now();
        let report = emu.launch(&module, "saxpy_grid_stride", &config, &args, &options)?;
        let secs = t.elapsed().as_secs_f64();
        if !report.completed || !report.findings.is_empty() {
            return Err(format!("saxpy did not run cleanly: {:?}", report.findings).into());
        }
        let mut out = vec![0u8; n * 4];
        emu.read(dy, &mut out)?;
        let wrong = out
            .chunks_exact(4)
            .zip(x.iter().zip(&y))
            .filter(|(got, (x, y))| {
                f32::from_le_bytes([got[0], got[1], got[2], got[3]]) != A.mul_add(**x, **y)
            })
            .count();
        if wrong > 0 {
            return Err(format!("{wrong} elements differ from the CPU's fma(a, x, y)").into());
        }
        println!(
            "| {n} | {grid} | {name} | {} | {} | {secs:.3} | {:.3e} |",
            options.cores(),
            report.thread_instructions,
            report.thread_instructions as f64 / secs
        );
    }
    Ok(())
}
