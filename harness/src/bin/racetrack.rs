//! `racetrack`: project tools that are not a chapter.
//!
//! `racetrack ptx` regenerates `kernels/ptx/` with the pinned NVRTC; `racetrack ptx --check`
//! lists committed PTX that is stale and fails if there is any.
//!
//! `racetrack check FILE.cu [--entry NAME] --grid G --block B --arg SPEC…` runs one kernel of
//! your own, on a GPU or on the emulator with its checkers, and prints what it wrote.
//!
//! `racetrack trace FILE.cu … --out trace.json` runs it on the emulator and records every step
//! (emu/TRACE.md); the book's players replay such traces.
//!
//! `racetrack doctor` says what this machine has (GPU, NVRTC, CUDA headers, nvcc and its C++
//! compiler, cuBLAS, NCCL, mdbook, Chromium), where each came from, and what to do about what is
//! missing.

use std::process::ExitCode;

use anyhow::{Context, Result, bail};
use clap::{Parser, Subcommand};
use harness::check::{self, CheckArgs, CheckReport};
use harness::timings::{self, Phase};
use harness::trace::{self, TraceArgs};
use harness::{Device, ptx};

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
    /// Run one kernel of your own with arguments from the command line; on the emulator its
    /// checkers report races, barrier misuse and out-of-bounds accesses with their lines
    #[command(after_help = check::HELP)]
    Check(Box<CheckArgs>),
    /// Run one kernel on the emulator and record every step of every warp, every memory access
    /// and every finding, as the JSON trace that the book's players replay (emu/TRACE.md)
    #[command(after_help = check::HELP)]
    Trace(Box<TraceArgs>),
    /// Build a whole CUDA program with nvcc and run its own main on the emulator, through
    /// Racetrack's CUDA runtime, with every checker on every launch (or on a GPU with
    /// NVIDIA's runtime: --backend cuda); `racetrack run [nvcc flags] FILES… -- ARGS` or
    /// `racetrack run ./prog ARGS` for a program built by `nvcc -cudart shared`
    #[command(after_help = harness::run::HELP)]
    Run {
        /// Racetrack's options, nvcc's flags, the files, then `--` and the program's arguments
        #[arg(trailing_var_arg = true, allow_hyphen_values = true, num_args = 0.., value_name = "ARGS")]
        args: Vec<std::ffi::OsString>,
    },
    /// What this machine has for Racetrack (GPU and driver, NVRTC, CUDA headers, nvcc and its C++
    /// compiler, cuBLAS, mdbook, Chromium), where each piece came from, and what to do about each
    /// one that is missing
    Doctor {
        /// Fetch NVRTC, CUDA's headers and nvcc into Racetrack's cache now if they are missing
        /// (otherwise that happens the first time something needs them)
        #[arg(long)]
        fetch: bool,
    },
}

/// Exit status of a run whose checkers reported findings; 1 stays "error", as clap's is.
const FINDINGS: u8 = 2;

fn main() -> ExitCode {
    let cli = match harness::cli::parse_or_exit::<Cli>() {
        Ok(cli) => cli,
        Err(code) => {
            say_a_whole_program_runs_as_it_is();
            return code;
        }
    };
    let checking = matches!(cli.command, Command::Check(_));
    let result = match cli.command {
        Command::Ptx { check } => run_ptx(check).map(|()| ExitCode::SUCCESS),
        Command::Check(args) => run_check(&args),
        Command::Trace(args) => run_trace(&args),
        Command::Doctor { fetch } => run_doctor(fetch),
        Command::Run { args } => run_program(&args),
    };
    match result {
        Ok(code) => code,
        Err(error) => {
            eprintln!("error: {error:#}");
            if checking {
                say_a_whole_program_runs_as_it_is();
            }
            ExitCode::FAILURE
        }
    }
}

/// After `racetrack check FILE …` failed before any launch (a missing `--grid`, an `--arg` too
/// few, a template with no `--entry`): when FILE has its own `main`, the one line that says
/// `racetrack run` takes it as it is, so no one restates a whole program's launch by hand.
fn say_a_whole_program_runs_as_it_is() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) != Some("check") {
        return;
    }
    let program = args.iter().skip(1).find(|arg| {
        let source = [".cu", ".cpp", ".cc", ".cxx"]
            .iter()
            .any(|extension| arg.ends_with(extension));
        source && std::fs::read_to_string(arg).is_ok_and(|text| harness::check::has_main(&text))
    });
    if let Some(program) = program {
        eprintln!(
            "note: {program} has a main: `cargo racetrack run {program}` runs it as it is, every \
             launch checked"
        );
    }
}

/// Racetrack's own lines, marked as the runtime marks them.
fn say(request: &harness::run::RunRequest, text: &str) {
    let marked: String = text.lines().map(|l| format!("racetrack: {l}\n")).collect();
    match &request.log_file {
        Some(path) => {
            let file = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(path);
            if let Ok(mut file) = file {
                let _ = std::io::Write::write_all(&mut file, marked.as_bytes());
            }
        }
        None => eprint!("{marked}"),
    }
}

fn run_program(raw: &[std::ffi::OsString]) -> Result<ExitCode> {
    use harness::run::{self, Program, Runtime};
    let request = run::parse(raw)?;
    let choice = match request.backend {
        Some(choice) => choice,
        None => harness::BackendChoice::from_env()?,
    };
    let cuda = match choice {
        harness::BackendChoice::Cuda => true,
        harness::BackendChoice::Emu => false,
        harness::BackendChoice::Auto => Device::open(harness::BackendChoice::Auto)
            .map(|d| d.kind().is_cuda())
            .unwrap_or(false),
    };
    let work = run::work_folder();
    std::fs::create_dir_all(&work).with_context(|| format!("creating {}", work.display()))?;
    let (program, args, toolchain) = match &request.program {
        Program::Source {
            flags,
            files,
            ignored,
            args,
        } => {
            if !ignored.is_empty() {
                say(
                    &request,
                    &format!(
                        "left out {} (Racetrack builds PTX for sm_90, which the emulator runs and a GPU compiles)",
                        ignored.join(", ")
                    ),
                );
            }
            let toolchain = harness::nvcc::require_nvcc()?;
            let program = run::build(&toolchain, flags, files, &work)?;
            (program, args.clone(), Some(toolchain))
        }
        Program::Binary { path, args } => (path.clone(), args.clone(), None),
    };
    if request.build_only {
        println!("{}", program.display());
        return Ok(ExitCode::SUCCESS);
    }
    if !run::loads_shared_runtime(&program) {
        bail!(
            "{} carries NVIDIA's CUDA runtime inside it (nvcc's default, -cudart static), where Racetrack cannot take its place: build it with -cudart shared, or give racetrack run its sources",
            program.display()
        );
    }
    let outcome = if cuda {
        let toolchain = match toolchain {
            Some(t) => t,
            None => harness::nvcc::require_nvcc()?,
        };
        run::execute(
            &request,
            &program,
            &args,
            Runtime::Nvidia(&toolchain.runtime_lib_dir),
            &work,
        )?
    } else {
        let library = run::our_runtime()?;
        let unprovided = run::missing_functions(&program, &library);
        for (calls, what) in [
            (
                &unprovided.not_emulated,
                "does not emulate yet; each call returns cudaErrorNotSupported and names its line",
            ),
            (
                &unprovided.missing,
                "does not provide yet; it runs until the first call of one, which ends it",
            ),
        ] {
            if !calls.is_empty() {
                let calls = calls.join(", ");
                say(
                    &request,
                    &format!("this program calls {calls} that Racetrack's runtime {what}"),
                );
            }
        }
        let folder = run::prepare_runtime_folder(&library, &work)?;
        // ptxas counts the kernels' registers as a GPU's driver would; a binary's run takes
        // an nvcc already here and fetches none for it.
        let ptxas = toolchain
            .or_else(|| harness::nvcc::find_nvcc().ok())
            .and_then(|t| t.ptxas());
        let ptxas = ptxas.as_deref();
        run::execute(
            &request,
            &program,
            &args,
            Runtime::Racetrack {
                folder: &folder,
                ptxas,
            },
            &work,
        )?
    };
    if let Some(path) = &request.json {
        let json = serde_json::to_string_pretty(&serde_json::json!({
            "backend": if cuda { "cuda" } else { "emu" },
            "exit_code": outcome.status.code(),
            "findings": outcome.findings,
        }))?;
        if path.as_os_str() == "-" {
            println!("{json}");
        } else {
            std::fs::write(path, json).with_context(|| format!("writing {}", path.display()))?;
        }
    }
    use std::os::unix::process::ExitStatusExt;
    let code = match (outcome.status.code(), outcome.status.signal()) {
        (Some(code), _) => code,
        (None, Some(signal)) => {
            say(
                &request,
                &format!(
                    "the program was ended by signal {signal} ({})",
                    signal_name(signal)
                ),
            );
            128 + signal
        }
        _ => 1,
    };
    if !cuda {
        let n = outcome.findings.len();
        say(
            &request,
            &match n {
                0 => "no findings".to_string(),
                1 => "1 finding".to_string(),
                n => format!("{n} findings"),
            },
        );
    }
    Ok(match request.error_exitcode {
        Some(error_code) if !outcome.findings.is_empty() => ExitCode::from(error_code),
        _ => ExitCode::from(code.clamp(0, 255) as u8),
    })
}

fn signal_name(signal: i32) -> &'static str {
    match signal {
        libc::SIGSEGV => "SIGSEGV, a bad memory access in the host code",
        libc::SIGABRT => "SIGABRT, the program aborted",
        libc::SIGBUS => "SIGBUS",
        libc::SIGFPE => "SIGFPE, an arithmetic error",
        libc::SIGKILL => "SIGKILL",
        libc::SIGINT => "SIGINT, interrupted",
        libc::SIGTERM => "SIGTERM, asked to end",
        _ => "a signal",
    }
}

fn run_doctor(fetch: bool) -> Result<ExitCode> {
    if fetch {
        harness::nvrtc::require_nvrtc()?;
        harness::nvrtc::require_cuda_headers()?;
        harness::nvcc::require_nvcc()?;
    }
    println!("racetrack doctor: what this machine has for Racetrack\n");
    print!("{}", harness::doctor::Diagnosis::examine());
    Ok(ExitCode::SUCCESS)
}

fn run_ptx(check: bool) -> Result<()> {
    let root = ptx::workspace_root();
    if check {
        let stale = ptx::stale_files(&root).context("checking kernels/ptx/")?;
        if !stale.is_empty() {
            bail!(
                "{} committed PTX file(s) are stale: {}; run `cargo run -p harness --bin racetrack -- ptx`",
                stale.len(),
                stale.join(", ")
            );
        }
        println!("kernels/ptx/ is up to date");
    } else {
        let changed = ptx::regenerate(&root).context("regenerating kernels/ptx/")?;
        for path in &changed {
            println!("wrote {path}");
        }
        println!("{} file(s) changed", changed.len());
    }
    Ok(())
}

fn run_check(args: &CheckArgs) -> Result<ExitCode> {
    let started = std::time::Instant::now();
    harness::cores::use_cores(args.threads);
    let prepared = check::prepare(args)?;
    let mut device = timings::time(Phase::Open, || Device::open(args.backend))?;
    device.set_emu_settings(args.emu_settings());
    start_watchdog(args, prepared.kernel.source().entry, &device);
    let outcome =
        prepared
            .kernel
            .run_keeping(&mut device, args.shape(), &prepared.args, &prepared.shown)?;
    let report = CheckReport {
        backend: device.kind(),
        banner: device.banner(),
        device: device.name().to_string(),
        kernel: &prepared.kernel,
        shape: args.shape(),
        specs: &args.args,
        args: &prepared.args,
        emu: device.emu_settings(),
        outcome: &outcome,
        shown: &prepared.shown,
    };
    if args.json {
        println!("{}", serde_json::to_string_pretty(&report.json())?);
    } else {
        print!("{}", report.text());
    }
    if args.timings {
        eprint!("{}", timings::table(&timings::take(), started));
    }
    Ok(if outcome.findings.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(FINDINGS)
    })
}

fn run_trace(args: &TraceArgs) -> Result<ExitCode> {
    let started = std::time::Instant::now();
    harness::cores::use_cores(args.check.threads);
    // Only the emulator records; a GPU (chosen by --backend or RACETRACK_BACKEND) is not used.
    let device = Device::open(harness::BackendChoice::Emu)?;
    // The kernel is found as the run starts: a file's only kernel goes by the file's name here.
    let check = &args.check;
    start_watchdog(
        check,
        check.entry.as_deref().unwrap_or(&check.file),
        &device,
    );
    let recorded = trace::record(args)?;
    trace::write(args, &recorded)?;
    let s = if recorded.findings == 1 { "" } else { "s" };
    println!(
        "wrote {}: {} events, {} finding{s}",
        args.out.display(),
        recorded.events,
        recorded.findings
    );
    if args.check.timings {
        eprint!("{}", timings::table(&timings::take(), started));
    }
    Ok(ExitCode::SUCCESS)
}

/// Ends the process when the run of `entry` outlasts `--timeout`: a GPU kernel that spins
/// forever never returns control, and exiting is the one way to take the device back.
fn start_watchdog(args: &CheckArgs, entry: &str, device: &Device) {
    if args.timeout.is_zero() {
        return;
    }
    let timeout = args.timeout;
    let entry = entry.to_string();
    let hint = if device.kind().is_cuda() {
        "; run it with --backend emu to see where its threads are stuck"
    } else {
        "; the emulator is slow on large launches: try a smaller grid, or raise --timeout"
    };
    std::thread::spawn(move || {
        std::thread::sleep(timeout);
        eprintln!(
            "error: {entry} did not finish within {} s (--timeout){hint}",
            timeout.as_secs_f64()
        );
        // `_exit`, not `exit`: the main thread may be inside NVRTC or the CUDA driver, and
        // running their exit handlers under it crashed the process instead of ending it.
        // SAFETY: `_exit` takes no pointers and never returns; skipping destructors is the point.
        unsafe { libc::_exit(1) }
    });
}
