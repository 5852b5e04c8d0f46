//! `cargo run -p ch3-life -- [--backend auto|cuda|emu] [--variant NAME] [--size SIDE] [--seed S] [--schedule …] [--list] [--out DIR]`

use std::process::ExitCode;

use anyhow::Result;
use ch3_life::VARIANTS;
use ch3_life::walkthrough::{DEFAULT_TIMING_SIDE, MAX_TIMING_SIDE, Options, walkthrough};
use clap::Parser;
use harness::cli::{CommonArgs, check_size};

#[derive(Debug, Parser)]
#[command(
    name = "ch3-life",
    about = "Chapter 3: the Game of Life on a torus: 2D grids, double buffering, barriers and shared-memory halos"
)]
struct Cli {
    #[command(flatten)]
    common: CommonArgs,

    /// Side of the square board the GPU timing table runs on
    #[arg(long, default_value_t = DEFAULT_TIMING_SIDE)]
    size: u32,
}

fn main() -> ExitCode {
    harness::cli::run_main(run)
}

fn run(cli: Cli) -> Result<()> {
    if cli.common.list {
        println!("{}", harness::walk::variant_table(VARIANTS));
        return Ok(());
    }
    check_size(
        cli.size,
        MAX_TIMING_SIDE,
        "cells a side (two boards of side² bytes must fit on the GPU)",
    )?;
    cli.common.check_variant(VARIANTS)?;
    let mut options = Options::new(cli.common.seed, cli.common.out_dir("ch3-life"));
    options.variant = cli.common.variant.clone();
    options.timing_side = cli.size;
    let mut device = cli.common.open_device()?;
    walkthrough(&mut device, &options, &mut std::io::stdout().lock())?;
    Ok(())
}
