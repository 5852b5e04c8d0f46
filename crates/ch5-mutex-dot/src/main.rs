//! `cargo run -p ch5-mutex-dot -- [--backend auto|cuda|emu] [--variant NAME] [--size N] [--seed S] [--schedule …] [--list] [--out DIR]`

use std::process::ExitCode;

use anyhow::Result;
use ch5_mutex_dot::VARIANTS;
use ch5_mutex_dot::walkthrough::{MAX_TIMING_LEN, Options, walkthrough};
use clap::Parser;
use harness::Device;
use harness::cli::CommonArgs;

#[derive(Debug, Parser)]
#[command(
    name = "ch5-mutex-dot",
    about = "Chapter 5: a mutex from atomics, and the dot product"
)]
struct Cli {
    #[command(flatten)]
    common: CommonArgs,

    /// Floats per vector in the GPU timing table
    #[arg(long, default_value_t = 1 << 26)]
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
    if cli.size == 0 || cli.size > MAX_TIMING_LEN {
        anyhow::bail!(
            "--size {} is outside 1..={MAX_TIMING_LEN} floats per vector",
            cli.size
        );
    }
    if let Some(name) = &cli.common.variant {
        harness::find_variant(VARIANTS, name).map_err(anyhow::Error::msg)?;
    }
    let mut options = Options::new(cli.common.seed, cli.common.out_dir("ch5-mutex-dot"));
    options.variant = cli.common.variant.clone();
    options.timing_len = cli.size;
    let mut device = Device::open(cli.common.backend)?;
    device.set_emu_settings(cli.common.emu_settings());
    let mut stdout = std::io::stdout().lock();
    walkthrough(&mut device, &options, &mut stdout)?;
    Ok(())
}
