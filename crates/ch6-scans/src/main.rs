//! `cargo run -p ch6-scans -- [--backend auto|cuda|emu] [--variant NAME] [--size N] [--seed S] [--schedule …] [--list] [--out DIR]`

use std::process::ExitCode;

use anyhow::Result;
use ch6_scans::VARIANTS;
use ch6_scans::walkthrough::{DEFAULT_TIMING_ELEMENTS, MAX_TIMING_ELEMENTS, Options, walkthrough};
use clap::Parser;
use harness::cli::{CommonArgs, check_size};

#[derive(Debug, Parser)]
#[command(
    name = "ch6-scans",
    about = "Chapter 6: Hillis–Steele and Blelloch scans, including the race real GPUs hide"
)]
struct Cli {
    #[command(flatten)]
    common: CommonArgs,

    /// Elements of the GPU timing input (unsigned ints)
    #[arg(long, default_value_t = DEFAULT_TIMING_ELEMENTS)]
    size: u64,
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
        MAX_TIMING_ELEMENTS,
        "elements (the kernels index with 32 bits and pad to a power of two)",
    )?;
    cli.common.check_variant(VARIANTS)?;
    let mut options = Options::new(cli.common.seed, cli.common.out_dir("ch6-scans"));
    options.variant = cli.common.variant.clone();
    options.timing_elements = cli.size;
    let mut device = cli.common.open_device()?;
    walkthrough(&mut device, &options, &mut std::io::stdout().lock())?;
    Ok(())
}
