//! `cargo learn`: see the crate's documentation and exercises/README.md.

use std::io::IsTerminal;
use std::process::ExitCode;

use learn::cli::{Cli, run};

fn main() -> ExitCode {
    let cli = match harness::cli::parse_or_exit::<Cli>() {
        Ok(cli) => cli,
        Err(code) => return code,
    };
    // Every check compiles the learner's file: NVRTC is fetched now, before the screen is
    // drawn, if it is not installed (once per machine).
    let checks = matches!(
        cli.command,
        None | Some(learn::cli::Command::Check { .. } | learn::cli::Command::Hint { .. })
    );
    if checks && let Err(error) = harness::nvrtc::require_nvrtc() {
        eprintln!("error: {error}");
        return ExitCode::FAILURE;
    }
    let in_a_terminal = std::io::stdin().is_terminal() && std::io::stdout().is_terminal();
    let result = if cli.command.is_none() && !in_a_terminal {
        learn::cli::run_without_terminal(&cli, &mut std::io::stdout())
    } else if cli.command.is_none() {
        learn::watch::run_terminal(cli.workspace(), cli.options()).map(|()| ExitCode::SUCCESS)
    } else {
        run(&cli, &mut std::io::stdout())
    };
    match result {
        Ok(code) => code,
        Err(error) => {
            eprintln!("error: {error:#}");
            ExitCode::FAILURE
        }
    }
}
