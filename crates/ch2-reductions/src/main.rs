//! `cargo run -p ch2-reductions -- [--backend auto|cuda|emu] [--variant NAME] [--size FLOATS] [--seed S] [--schedule …] [--list] [--out DIR]`

use std::process::ExitCode;

use anyhow::Result;
use ch2_reductions::VARIANTS;
use ch2_reductions::walkthrough::{Options, check_size, walkthrough};
use clap::Parser;
use harness::cli::CommonArgs;

#[derive(Debug, Parser)]
#[command(
    name = "ch2-reductions",
    about = "Chapter 2: shared memory, barriers and 1D/2D reductions"
)]
struct Cli {
    #[command(flatten)]
    common: CommonArgs,

    /// Floats of the 1D input (the 2D input is the largest square within them)
    /// [default: 268435456 on a GPU, 100003 on the emulator]
    #[arg(long)]
    size: Option<usize>,
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
    cli.common.check_variant(VARIANTS)?;
    let mut device = cli.common.open_device()?;
    let is_cuda = device.kind().is_cuda();
    let mut options = Options::new(
        cli.common.seed,
        cli.common.out_dir("ch2-reductions"),
        is_cuda,
    );
    options.variant = cli.common.variant.clone();
    if let Some(size) = cli.size {
        options.size = size;
    }
    walkthrough(&mut device, &options, &mut std::io::stdout().lock())?;
    Ok(())
}
