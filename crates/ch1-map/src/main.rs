//! `cargo run -p ch1-map -- [--backend auto|cuda|emu] [--variant NAME] [--size N] [--seed S] [--schedule …] [--list] [--out DIR]`

use std::process::ExitCode;

use anyhow::Result;
use ch1_map::VARIANTS;
use ch1_map::walkthrough::{EMU_SIZE, GPU_SIZE, MAX_SIZE, Options, walkthrough};
use clap::Parser;
use harness::Device;
use harness::cli::CommonArgs;

#[derive(Debug, Parser)]
#[command(
    name = "ch1-map",
    about = "Chapter 1: threads, blocks, grids and element-wise maps"
)]
struct Cli {
    #[command(flatten)]
    common: CommonArgs,

    /// Floats per array (on a GPU also the timing input)
    /// [default: 268435456 on a GPU, 10007 on the emulator]
    #[arg(long)]
    size: Option<usize>,
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
    if let Some(size) = cli.size
        && (size == 0 || size > MAX_SIZE)
    {
        anyhow::bail!(
            "--size {size} is outside 1..={MAX_SIZE} elements (the kernels' indices are 32-bit)"
        );
    }
    if let Some(name) = &cli.common.variant {
        harness::find_variant(VARIANTS, name).map_err(anyhow::Error::msg)?;
    }
    let mut device = Device::open(cli.common.backend)?;
    device.set_emu_settings(cli.common.emu_settings());
    let is_cuda = device.kind().is_cuda();
    let mut options = Options::new(cli.common.seed, cli.common.out_dir("ch1-map"), is_cuda);
    options.variant = cli.common.variant.clone();
    options.size = cli
        .size
        .unwrap_or(if is_cuda { GPU_SIZE } else { EMU_SIZE });
    let mut stdout = std::io::stdout().lock();
    walkthrough(&mut device, &options, &mut stdout)?;
    Ok(())
}
