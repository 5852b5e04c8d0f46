//! `cargo run -p ch7-matmul -- [--backend auto|cuda|emu] [--variant NAME] [--size N] [--chunks C] [--streams S] [--seed S] [--list] [--out DIR]`

use std::process::ExitCode;

use anyhow::Result;
use ch7_matmul::walkthrough::{MAX_TIMING_SIDE, Options, walkthrough};
use ch7_matmul::{Plan, VARIANTS};
use clap::Parser;
use harness::cli::{CommonArgs, check_size};

/// Most streams and chunks the pipeline accepts: more only adds launch overhead.
const MAX_STREAMS: u32 = 32;
const MAX_CHUNKS: u32 = 256;

#[derive(Debug, Parser)]
#[command(
    name = "ch7-matmul",
    about = "Chapter 7: matrix multiplication, tiling, and copy/compute overlap with streams"
)]
struct Cli {
    #[command(flatten)]
    common: CommonArgs,

    /// Side of the square matrices the GPU timing multiplies
    #[arg(long, default_value_t = 4096)]
    size: u32,

    /// Chunks of rows the pipeline splits A and C into
    #[arg(long, default_value_t = 8)]
    chunks: u32,

    /// Streams the pipeline's chunks are spread over
    #[arg(long, default_value_t = 4)]
    streams: u32,
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
        "(the side of the square matrices timed on a GPU)",
    )?;
    if cli.chunks == 0 || cli.chunks > MAX_CHUNKS {
        anyhow::bail!("--chunks {} is outside 1..={MAX_CHUNKS}", cli.chunks);
    }
    if cli.streams == 0 || cli.streams > MAX_STREAMS {
        anyhow::bail!("--streams {} is outside 1..={MAX_STREAMS}", cli.streams);
    }
    cli.common.check_variant(VARIANTS)?;
    let mut options = Options::new(cli.common.seed, cli.common.out_dir("ch7-matmul"));
    options.variant = cli.common.variant.clone();
    options.timing_side = cli.size;
    options.plan = Plan {
        chunks: cli.chunks,
        streams: cli.streams,
    };
    let mut device = cli.common.open_device()?;
    walkthrough(&mut device, &options, &mut std::io::stdout().lock())?;
    Ok(())
}
