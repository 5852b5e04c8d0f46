//! `cargo run -p ch5-mutex-dot -- [--backend auto|cuda|emu] [--variant NAME] [--size N] [--seed S] [--schedule …] [--list] [--out DIR]`

use std::process::ExitCode;

use anyhow::Result;
use ch5_mutex_dot::VARIANTS;
use ch5_mutex_dot::walkthrough::{MAX_TIMING_LEN, Options, walkthrough};
use clap::Parser;
use harness::cli::{CommonArgs, check_size};

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
    harness::cli::run_main(run)
}

fn run(cli: Cli) -> Result<()> {
    if cli.common.list {
        println!("{}", harness::walk::variant_table(VARIANTS));
        return Ok(());
    }
    check_size(cli.size, MAX_TIMING_LEN, "floats per vector")?;
    cli.common.check_variant(VARIANTS)?;
    let mut options = Options::new(cli.common.seed, cli.common.out_dir("ch5-mutex-dot"));
    options.variant = cli.common.variant.clone();
    options.timing_len = cli.size;
    let mut device = cli.common.open_device()?;
    walkthrough(&mut device, &options, &mut std::io::stdout().lock())?;
    Ok(())
}
