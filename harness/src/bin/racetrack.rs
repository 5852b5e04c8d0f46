//! `racetrack`: project tools that are not a chapter.
//!
//! `racetrack ptx` regenerates `kernels/ptx/` with the pinned NVRTC; `racetrack ptx --check`
//! lists committed PTX that is stale and fails if there is any.

use std::process::ExitCode;

use anyhow::{Context, Result, bail};
use clap::{Parser, Subcommand};
use harness::ptx;

#[derive(Parser)]
#[command(name = "racetrack", about = "Racetrack's project tools")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Regenerate kernels/ptx/ (and emu/tests/corpus/*.ptx) with the pinned NVRTC
    Ptx {
        /// Only report stale files; exit non-zero if there are any
        #[arg(long)]
        check: bool,
    },
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
    let root = ptx::workspace_root();
    match cli.command {
        Command::Ptx { check: true } => {
            let stale = ptx::stale_files(&root).context("checking kernels/ptx/")?;
            if !stale.is_empty() {
                bail!("{} committed PTX file(s) are stale: {}; run `cargo run -p harness --bin racetrack -- ptx`", stale.len(), stale.join(", "));
            }
            println!("kernels/ptx/ is up to date");
        }
        Command::Ptx { check: false } => {
            let changed = ptx::regenerate(&root).context("regenerating kernels/ptx/")?;
            for path in &changed {
                println!("wrote {path}");
            }
            println!("{} file(s) changed", changed.len());
        }
    }
    Ok(())
}
