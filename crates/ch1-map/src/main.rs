//! `cargo run -p ch1-map -- [--backend auto|cuda|emu] [--variant NAME] [--size N] [--timing-size N] [--seed S] [--schedule …] [--list] [--out DIR]`

use std::process::ExitCode;

use anyhow::Result;
use ch1_map::VARIANTS;
use ch1_map::walkthrough::{Options, check_size, check_timing_size, walkthrough};
use clap::Parser;
use harness::cli::CommonArgs;

#[derive(Debug, Parser)]
#[command(
    name = "ch1-map",
    about = "Chapter 1: threads, blocks, grids and element-wise maps"
)]
struct Cli {
    #[command(flatten)]
    common: CommonArgs,

    /// Floats per array of the steps
    /// [default: 16777259 on a GPU, 10007 on the emulator]
    #[arg(long)]
    size: Option<usize>,

    /// Floats per array of the GPU timing table, climb and sweep [default: 268435456]
    #[arg(long)]
    timing_size: Option<usize>,
}

fn main() -> ExitCode {
    harness::cli::run_main(run)
}

fn run(cli: Cli) -> Result<()> {
    if cli.common.list {
        println!("{}", harness::walk::variant_table(VARIANTS));
        return Ok(());
    }
    if let Some(size) = cli.size {
        check_size(size)?;
    }
    if let Some(size) = cli.timing_size {
        check_timing_size(size)?;
    }
    cli.common.check_variant(VARIANTS)?;
    let mut device = cli.common.open_device()?;
    let is_cuda = device.kind().is_cuda();
    let mut options = Options::new(cli.common.seed, cli.common.out_dir("ch1-map"), is_cuda);
    options.variant = cli.common.variant.clone();
    if let Some(size) = cli.size {
        options.size = size;
    }
    if let Some(size) = cli.timing_size {
        options.timing_size = size;
    }
    walkthrough(&mut device, &options, &mut std::io::stdout().lock())?;
    Ok(())
}
