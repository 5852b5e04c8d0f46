//! `cargo run -p ch6-scans -- [--backend auto|cuda|emu] [--variant NAME] [--size N] [--seed S] [--schedule …] [--list] [--out DIR]`

use std::process::ExitCode;

use anyhow::Result;
use ch6_scans::VARIANTS;
use ch6_scans::walkthrough::{DEFAULT_TIMING_ELEMENTS, MAX_TIMING_ELEMENTS, Options, walkthrough};
use clap::Parser;
use harness::Device;
use harness::cli::CommonArgs;

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
    if cli.size == 0 || cli.size > MAX_TIMING_ELEMENTS {
        anyhow::bail!(
            "--size {} is outside 1..={MAX_TIMING_ELEMENTS} elements (the kernels index with 32 bits and pad to a power of two)",
            cli.size
        );
    }
    if let Some(name) = &cli.common.variant {
        harness::find_variant(VARIANTS, name).map_err(anyhow::Error::msg)?;
    }
    let mut options = Options::new(cli.common.seed, cli.common.out_dir("ch6-scans"));
    options.variant = cli.common.variant.clone();
    options.timing_elements = cli.size;
    let mut device = Device::open(cli.common.backend)?;
    device.set_emu_settings(cli.common.emu_settings());
    let mut stdout = std::io::stdout().lock();
    walkthrough(&mut device, &options, &mut stdout)?;
    Ok(())
}
