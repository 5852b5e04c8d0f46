//! Thread-instructions per second on a shared-memory tree reduction, with the checkers off and on.
//!
//! `cargo run --release -p ptx-emu --example bench [-- N]`

use ptx_emu::{Emulator, KernelArg, LaunchConfig, Module, RunOptions, Schedule};
use std::time::Instant;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let n: usize = std::env::args()
        .nth(1)
        .map(|s| s.parse())
        .transpose()?
        .unwrap_or(1 << 18);
    let module = Module::parse(include_str!("../tests/corpus/tree_reduce.ptx"))?;
    let block = 256u32;
    let grid = n.div_ceil(block as usize) as u32;
    let data: Vec<u8> = (0..n)
        .flat_map(|i| ((i % 10) as f32).to_le_bytes())
        .collect();
    let configs = [
        (
            "checkers off",
            RunOptions {
                racecheck: false,
                synccheck: false,
                memcheck: false,
                ..RunOptions::default()
            },
        ),
        (
            "memcheck + synccheck",
            RunOptions {
                racecheck: false,
                ..RunOptions::default()
            },
        ),
        ("all checkers", RunOptions::default()),
        (
            "all checkers, random schedule",
            RunOptions {
                schedule: Schedule::Random { seed: 1 },
                ..RunOptions::default()
            },
        ),
    ];
    println!("tree reduction: {n} floats, {grid} blocks of {block} threads");
    for (name, opts) in configs {
        let mut emu = Emulator::new();
        let input = emu.alloc(n * 4, "in");
        emu.write(input, &data)?;
        let out = emu.alloc(grid as usize * 4, "out");
        let cfg = LaunchConfig {
            grid: [grid, 1, 1],
            block: [block, 1, 1],
            dynamic_shared_bytes: block * 4,
        };
        let t = Instant::now();
        let r = emu.launch(
            &module,
            "tree_reduce",
            &cfg,
            &[
                KernelArg::Ptr(input),
                KernelArg::Ptr(out),
                KernelArg::I32(n as i32),
            ],
            &RunOptions {
                step_budget: u64::MAX,
                ..opts
            },
        )?;
        let s = t.elapsed().as_secs_f64();
        println!(
            "{name:>30}: {:>11} thread-instructions in {s:.3} s = {:.1} M/s ({} findings)",
            r.thread_instructions,
            r.thread_instructions as f64 / s / 1e6,
            r.findings.len()
        );
    }
    Ok(())
}
