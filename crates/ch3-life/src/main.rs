//! `cargo run -p ch3-life -- [--backend auto|cuda|emu] [--variant NAME] [--size SIDE] [--seed S] [--schedule …] [--list] [--out DIR]`

use std::process::ExitCode;

use anyhow::Result;
use ch3_life::VARIANTS;
use ch3_life::walkthrough::{DEFAULT_TIMING_SIDE, MAX_TIMING_SIDE, Options, walkthrough};
use clap::Parser;
use harness::Device;
use harness::cli::CommonArgs;

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
    match run(Cli::parse()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("error: {error:#}");
            ExitCode::FAILURE
        }
    }
}

fn run(cli: Cli) -> Result<()> {
    if cli.common.list {
        println!("{}", harness::walk::variant_table(VARIANTS));
        return Ok(());
    }
    if cli.size == 0 || cli.size > MAX_TIMING_SIDE {
        anyhow::bail!(
            "--size {} is outside 1..={MAX_TIMING_SIDE} cells a side (two boards of side² bytes must fit on the GPU)",
            cli.size
        );
    }
    if let Some(name) = &cli.common.variant {
        harness::find_variant(VARIANTS, name).map_err(anyhow::Error::msg)?;
    }
    let mut options = Options::new(cli.common.seed, cli.common.out_dir("ch3-life"));
    options.variant = cli.common.variant.clone();
    options.timing_side = cli.size;
    let mut device = Device::open(cli.common.backend)?;
    device.set_emu_settings(cli.common.emu_settings());
    let mut stdout = std::io::stdout().lock();
    walkthrough(&mut device, &options, &mut stdout)?;
    Ok(())
}
