//! `cargo run -p ch8-many-gpus -- [--backend auto|cuda|emu] [--devices N] [--variant NAME] [--size N] [--seed S] [--schedule …] [--list] [--out DIR]`

use std::process::ExitCode;

use anyhow::{Result, bail};
use ch8_many_gpus::walkthrough::{MAX_TIMING_LEN, Options, walkthrough};
use ch8_many_gpus::{DEFAULT_EMULATED_DEVICES, MAX_EMULATED_DEVICES, VARIANTS};
use clap::Parser;
use harness::Gpus;
use harness::cli::{CommonArgs, check_size};

#[derive(Debug, Parser)]
#[command(
    name = "ch8-many-gpus",
    about = "Chapter 8: many GPUs — split reductions, peer copies, peer access and a ring all-reduce"
)]
struct Cli {
    #[command(flatten)]
    common: CommonArgs,

    /// Devices on the emulator (a GPU run uses every GPU of the machine)
    #[arg(long, default_value_t = DEFAULT_EMULATED_DEVICES)]
    devices: usize,

    /// Floats per device in the headline all-reduce of the GPU timing table
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
    check_size(cli.size, MAX_TIMING_LEN, "floats per device (1 GiB)")?;
    if !(2..=MAX_EMULATED_DEVICES).contains(&cli.devices) {
        bail!(
            "--devices {} is outside 2..={MAX_EMULATED_DEVICES}: a ring needs two devices, and the emulator holds up to {MAX_EMULATED_DEVICES}",
            cli.devices
        );
    }
    cli.common.check_variant(VARIANTS)?;
    let mut options = Options::new(cli.common.seed, cli.common.out_dir("ch8-many-gpus"));
    options.variant = cli.common.variant.clone();
    options.timing_len = cli.size;
    let mut gpus = Gpus::open(cli.common.backend, 2, cli.devices)?;
    gpus.set_emu_settings(cli.common.emu_settings());
    walkthrough(&mut gpus, &options, &mut std::io::stdout().lock())?;
    Ok(())
}
