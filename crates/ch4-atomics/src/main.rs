//! `cargo run -p ch4-atomics -- [--backend auto|cuda|emu] [--variant NAME] [--size BYTES] [--seed S] [--text FILE] [--list] [--out DIR]`

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result};
use ch4_atomics::VARIANTS;
use ch4_atomics::walkthrough::{MAX_TIMING_BYTES, Options, walkthrough};
use clap::Parser;
use harness::cli::{CommonArgs, check_size};

#[derive(Debug, Parser)]
#[command(
    name = "ch4-atomics",
    about = "Chapter 4: data races, atomics and histograms"
)]
struct Cli {
    #[command(flatten)]
    common: CommonArgs,

    /// Bytes of the GPU timing input (the text repeated)
    #[arg(long, default_value_t = 1 << 30)]
    size: u64,

    /// Count the letters of this text instead of the built-in one
    #[arg(long)]
    text: Option<PathBuf>,
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
        MAX_TIMING_BYTES,
        "bytes (the kernels take a 32-bit length)",
    )?;
    cli.common.check_variant(VARIANTS)?;
    let mut options = Options::new(cli.common.seed, cli.common.out_dir("ch4-atomics"));
    options.variant = cli.common.variant.clone();
    options.timing_bytes = cli.size;
    if let Some(path) = &cli.text {
        options.text = std::fs::read(path)
            .with_context(|| format!("cannot read --text {}", path.display()))?;
        options.text_name = path.display().to_string();
    }
    let mut device = cli.common.open_device()?;
    walkthrough(&mut device, &options, &mut std::io::stdout().lock())?;
    Ok(())
}
