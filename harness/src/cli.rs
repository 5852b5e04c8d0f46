//! Flags every chapter binary shares, so `--backend`, `--seed` and friends mean the same everywhere.

use std::fmt::Display;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

use crate::backend::BackendChoice;
use crate::device::{Device, EmuSettings, Schedule};
use crate::error::{HarnessError, Result};
use crate::variant::{Variant, find_variant};

#[derive(Debug, Clone, Args)]
pub struct CommonArgs {
    /// Where kernels run: a GPU (cuda), the PTX emulator (emu), or cuda when there is one (auto)
    #[arg(long, value_enum, default_value_t = BackendChoice::Auto, env = "RACETRACK_BACKEND")]
    pub backend: BackendChoice,

    /// Run only this variant (see --list)
    #[arg(long)]
    pub variant: Option<String>,

    /// Seed for every generated input; printed so any run can be repeated
    #[arg(long, default_value_t = 2024)]
    pub seed: u64,

    /// Emulator schedule (random, adversarial and lanes use --seed)
    #[arg(long, value_enum, default_value_t = ScheduleName::Hardware)]
    pub schedule: ScheduleName,

    /// Cores the emulator may use [default: every core]; what it finds is the same for any number
    #[arg(long, value_name = "N", env = THREADS_ENV, value_parser = clap::value_parser!(u32).range(1..))]
    pub threads: Option<u32>,

    /// The emulator's engine: the interpreter, or native code for straight-line register
    /// arithmetic; auto compiles launches of 2^20 threads or more (emu/BENCHMARK.md). Results are the same
    #[arg(long, value_enum, env = ENGINE_ENV, default_value_t = EngineName::Auto)]
    pub engine: EngineName,

    /// List the chapter's variants and exit
    #[arg(long)]
    pub list: bool,

    /// Directory for plots and images [default: target/racetrack/<chapter>]
    #[arg(long)]
    pub out: Option<PathBuf>,
}

/// The variable that sets `--threads` when the flag is not given (the emulator reads it too).
pub use ptx_emu::THREADS_ENV;

/// The variable that sets `--engine` when the flag is not given (the emulator reads it too).
pub use ptx_emu::ENGINE_ENV;

/// The emulator's engines as flags name them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum EngineName {
    /// the interpreter, instruction by instruction (the reference)
    Interp,
    /// native code (Cranelift) for straight-line register arithmetic, the interpreter elsewhere
    Compiled,
    /// RACETRACK_ENGINE's choice, else the interpreter (the compiled tier does not pay for its
    /// compile yet)
    Auto,
}

impl EngineName {
    pub fn engine(self) -> ptx_emu::Engine {
        match self {
            Self::Interp => ptx_emu::Engine::Interp,
            Self::Compiled => ptx_emu::Engine::Compiled,
            Self::Auto => ptx_emu::Engine::Auto,
        }
    }
}

/// The emulator's schedules as flags name them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ScheduleName {
    /// warps take turns instruction by instruction, like a GPU
    Hardware,
    /// a random warp runs a random number of instructions (uses --seed)
    Random,
    /// one warp runs alone until its next barrier (uses --seed)
    Adversarial,
    /// as random, and a warp's lanes run apart, as independent thread scheduling lets them
    /// (uses --seed)
    Lanes,
}

/// What racecheck reports (`--memory-model`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum MemoryModelName {
    /// PTX's data races with scopes, and also volatile/relaxed accesses to data that nothing
    /// orders (two atomics, and any strong pair on a word seen polled, acquired or released as a
    /// flag or lock, are synchronization, not races)
    Racecheck,
    /// exactly PTX's data races: volatile, relaxed and atomic accesses never race with each other
    /// when their scopes cover both threads
    Ptx,
}

impl MemoryModelName {
    pub fn model(self) -> ptx_emu::MemoryModel {
        match self {
            Self::Racecheck => ptx_emu::MemoryModel::Racecheck,
            Self::Ptx => ptx_emu::MemoryModel::Ptx,
        }
    }
}

impl ScheduleName {
    pub fn with_seed(self, seed: u64) -> Schedule {
        match self {
            Self::Hardware => Schedule::Hardware,
            Self::Random => Schedule::Random { seed },
            Self::Adversarial => Schedule::Adversarial { seed },
            Self::Lanes => Schedule::Lanes { seed },
        }
    }
}

impl CommonArgs {
    pub fn emu_settings(&self) -> EmuSettings {
        EmuSettings {
            schedule: self.schedule.with_seed(self.seed),
            threads: self.threads.unwrap_or(0),
            engine: self.engine.engine(),
            ..EmuSettings::default()
        }
    }

    /// `--out`, or [`default_out_dir`].
    pub fn out_dir(&self, chapter: &str) -> PathBuf {
        self.out.clone().unwrap_or_else(|| default_out_dir(chapter))
    }

    /// Refuses a `--variant` the chapter does not have before any device is opened, so the
    /// mistake is reported even on a machine where the chosen backend cannot start.
    pub fn check_variant<K>(&self, variants: &[Variant<K>]) -> Result<()> {
        match &self.variant {
            Some(name) => find_variant(variants, name)
                .map(|_| ())
                .map_err(HarnessError::Invalid),
            None => Ok(()),
        }
    }

    /// The `--backend` device, with `--schedule` and `--seed` applied to the emulator.
    pub fn open_device(&self) -> Result<Device> {
        let mut device = Device::open(self.backend)?;
        device.set_emu_settings(self.emu_settings());
        Ok(device)
    }
}

/// Where a chapter writes its plots and images without `--out`: `target/racetrack/<chapter>`
/// under the workspace. The book's snapshots show this path, whatever directory a test used.
pub fn default_out_dir(chapter: &str) -> PathBuf {
    PathBuf::from("target/racetrack").join(chapter)
}

/// Refuses a `--size` of 0 or above `max`; `unit` names what is counted and why `max` is the
/// limit, e.g. `"floats (the kernels' indices are 32-bit)"`.
pub fn check_size<T>(size: T, max: T, unit: &str) -> Result<()>
where
    T: Copy + PartialOrd + Display + From<u8>,
{
    if size < T::from(1) || size > max {
        return Err(HarnessError::Invalid(format!(
            "--size {size} is outside 1..={max} {unit}"
        )));
    }
    Ok(())
}

/// A chapter binary's exit: errors are the one `error: …` line on stderr (with their causes,
/// `{:#}`) and a non-zero status, never a panic or a debug print.
pub fn exit_code<E: Display>(result: Result<(), E>) -> ExitCode {
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("error: {error:#}");
            ExitCode::FAILURE
        }
    }
}

/// A chapter binary's `main`: parse the command line (usage errors as one line, see
/// [`parse_or_exit`]), run with progress lines on (see [`crate::walk::working`]), and turn the
/// result into the exit status (see [`exit_code`]).
pub fn run_main<T: clap::Parser, E: Display>(run: impl FnOnce(T) -> Result<(), E>) -> ExitCode {
    match parse_or_exit::<T>() {
        Ok(args) => {
            crate::walk::show_progress();
            exit_code(run(args))
        }
        Err(code) => code,
    }
}

/// The generator behind every input: same seed, same data, on every platform.
pub fn seeded_rng(seed: u64) -> ChaCha8Rng {
    ChaCha8Rng::seed_from_u64(seed)
}

/// Elements per piece of [`seeded_fill`]. Inputs no longer than this are exactly what one
/// [`seeded_rng`] draws in order, so the emulator's small inputs (and the snapshots of them)
/// are the same as a serial loop's.
pub const SEEDED_PIECE: usize = 1 << 20;

/// Fills `values` from `seed` on every core, for inputs of hundreds of millions of elements:
/// piece `k` of [`SEEDED_PIECE`] elements gets `fill(rng, piece)` with `rng` on ChaCha stream
/// `k` of the seed. The result depends on the seed alone, not on how many cores drew it, and
/// piece 0 is stream 0, the sequence [`seeded_rng`] gives.
pub fn seeded_fill<T: Send>(
    values: &mut [T],
    seed: u64,
    fill: impl Fn(&mut ChaCha8Rng, &mut [T]) + Sync,
) {
    use rayon::prelude::*;
    crate::cores::use_cores(None);
    values
        .par_chunks_mut(SEEDED_PIECE)
        .enumerate()
        .for_each(|(piece, values)| {
            let mut rng = seeded_rng(seed);
            if piece > 0 {
                rng.set_stream(piece as u64);
            }
            fill(&mut rng, values);
        });
}

/// `len` values of `draw` from `seed`, drawn on every core as [`seeded_fill`] draws them; up to
/// [`SEEDED_PIECE`] values, exactly `(0..len).map(|_| draw(&mut seeded_rng(seed)))` with one
/// generator.
pub fn seeded_values<T: Send + Clone + Default>(
    len: usize,
    seed: u64,
    draw: impl Fn(&mut ChaCha8Rng) -> T + Sync,
) -> Vec<T> {
    let mut values = vec![T::default(); len];
    seeded_fill(&mut values, seed, |rng, piece| {
        for value in piece {
            *value = draw(rng);
        }
    });
    values
}

/// Parses the command line. clap prints a usage error over several lines (the error, a hint, the
/// usage, "For more information…") and exits 2; Racetrack's binaries report bad input as one line
/// and exit 1 (2 means "the checkers found something"). Help and version print as clap prints them.
pub fn parse_or_exit<T: clap::Parser>() -> Result<T, std::process::ExitCode> {
    T::try_parse().map_err(|error| {
        if !error.use_stderr() {
            let _ = error.print();
            return std::process::ExitCode::SUCCESS;
        }
        eprintln!("{}", one_line_usage_error(&error.render().to_string()));
        std::process::ExitCode::FAILURE
    })
}

fn one_line_usage_error(rendered: &str) -> String {
    rendered
        .lines()
        .map(str::trim)
        .filter(|line| {
            !line.is_empty()
                && !line.starts_with("Usage:")
                && !line.starts_with("For more information")
        })
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Debug, Parser)]
    struct Cli {
        #[command(flatten)]
        common: CommonArgs,
    }

    #[test]
    fn usage_errors_become_one_line_with_the_possible_values() {
        let error = Cli::try_parse_from(["demo", "--backend", "gpu"]).expect_err("bad backend");
        let line = one_line_usage_error(&error.render().to_string());
        assert!(!line.contains('\n'), "{line}");
        assert!(
            line.starts_with("error: invalid value 'gpu' for '--backend")
                && line.contains("possible values: auto, cuda, emu"),
            "{line}"
        );
        assert!(!line.contains("For more information"), "{line}");
    }

    #[test]
    fn parses_documented_flags_and_rejects_bad_values() {
        let cli = Cli::try_parse_from([
            "x",
            "--backend",
            "emu",
            "--seed",
            "7",
            "--schedule",
            "adversarial",
        ])
        .unwrap();
        assert_eq!(cli.common.backend, BackendChoice::Emu);
        assert_eq!(
            cli.common.emu_settings().schedule,
            Schedule::Adversarial { seed: 7 }
        );
        assert!(Cli::try_parse_from(["x", "--backend", "opencl"]).is_err());
        assert!(Cli::try_parse_from(["x", "--seed", "-1"]).is_err());
        let error = Cli::try_parse_from(["x", "--schedule", "fast"])
            .err()
            .unwrap()
            .to_string();
        assert!(
            error.contains("invalid value 'fast' for '--schedule"),
            "{error}"
        );
        let cli = Cli::try_parse_from(["x", "--threads", "3"]).unwrap();
        assert_eq!(cli.common.emu_settings().threads, 3);
        let cli = Cli::try_parse_from(["x", "--engine", "interp"]).unwrap();
        assert_eq!(cli.common.emu_settings().engine, ptx_emu::Engine::Interp);
        let error = Cli::try_parse_from(["x", "--engine", "jit"])
            .err()
            .unwrap()
            .to_string();
        assert!(
            error.contains("invalid value 'jit' for '--engine"),
            "{error}"
        );
        let error = Cli::try_parse_from(["x", "--threads", "0"])
            .err()
            .unwrap()
            .to_string();
        assert!(
            error.contains("invalid value '0' for '--threads <N>'"),
            "{error}"
        );
    }

    #[test]
    fn seeded_values_repeat_a_serial_draw_and_do_not_depend_on_the_cores() {
        use rand::Rng;
        let draw = |rng: &mut ChaCha8Rng| rng.random_range(0..1000u32);
        let mut rng = seeded_rng(9);
        let serial: Vec<u32> = (0..5000).map(|_| draw(&mut rng)).collect();
        assert_eq!(seeded_values(5000, 9, draw), serial);
        let long = seeded_values(2 * SEEDED_PIECE + 5, 9, draw);
        assert_eq!(long[..5000], serial[..]);
        assert_eq!(long, seeded_values(2 * SEEDED_PIECE + 5, 9, draw));
        let one_core = rayon::ThreadPoolBuilder::new()
            .num_threads(1)
            .build()
            .expect("a pool of one thread")
            .install(|| seeded_values(2 * SEEDED_PIECE + 5, 9, draw));
        assert_eq!(long, one_core);
        // a later piece is not a copy of the first
        assert_ne!(long[SEEDED_PIECE..SEEDED_PIECE + 100], long[..100]);
        assert_ne!(seeded_values(100, 10, draw), long[..100]);
    }

    #[test]
    fn sizes_outside_the_range_are_refused_with_their_unit() {
        check_size(1u32, 8, "cells").unwrap();
        check_size(8usize, 8, "cells").unwrap();
        assert_eq!(
            check_size(0u64, 8, "bytes (why)").unwrap_err().to_string(),
            "--size 0 is outside 1..=8 bytes (why)"
        );
        assert!(check_size(9u32, 8, "cells").is_err());
    }
}
