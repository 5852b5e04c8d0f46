//! Checking a learner's file: compile, run on the emulator under every schedule with the
//! checkers on, then on a GPU when there is one.

use harness::backend::cuda_driver_present;
use harness::{BackendChoice, Device, EmuSettings, Expect, Finding, FindingKind, HarnessError};

use crate::exercise::{Exercise, Reason};
use crate::goal::{Missed, Outcome};
use crate::program::Program;
use crate::property::Budget;

/// How a host runs one exercise's kernels: which launches, on which generated cases, compared
/// with which CPU reference. Each chapter's module in [`crate::track`] has its own.
pub trait Check: Send + Sync {
    /// Runs every case of `budget` on `device`; `Ok` with the number of cases run when all pass.
    fn run(&self, program: &Program, device: &mut Device, budget: &Budget) -> Result<u32, Failure>;

    /// The exercise's goals beyond a right answer ([`crate::goal`]), measured on `device` once
    /// every case has passed there; none by default.
    fn goals(&self, program: &Program, device: &mut Device) -> Result<Vec<Outcome>, Failure> {
        let _ = (program, device);
        Ok(Vec::new())
    }
}

/// Why a file is not fixed yet.
#[derive(Debug, Clone)]
pub enum Failure {
    /// NVRTC is not installed, so nothing can be compiled.
    NoNvrtc,
    /// NVRTC's log, lines as `exercises/…cu:LINE: error: …`.
    Compile { log: String },
    /// The file lacks a kernel the host launches, or it takes other parameters.
    Kernel(String),
    /// A generated case failed.
    Case(Box<CaseFailure>),
    /// Something outside the learner's file failed (a device that does not open).
    Setup(String),
    /// Every case passed, but a goal of the exercise was missed: bank conflicts, speed.
    Goal(Box<Missed>),
}

/// The smallest failing case proptest found, and what it showed.
#[derive(Debug, Clone)]
pub struct CaseFailure {
    /// Where it ran: the emulator and its schedule, or the GPU's name.
    pub on: String,
    pub facts: Vec<(String, String)>,
    pub findings: Vec<Finding>,
    pub wrong: Option<Wrong>,
    pub error: Option<String>,
}

/// The first value that differs from the CPU reference.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Wrong {
    /// `y[97]`, `the sum`, `cell (x 3, y 0)`.
    pub what: String,
    pub expected: String,
    pub got: String,
    /// `3 of 97 values differ`.
    pub summary: Option<String>,
}

impl Failure {
    /// What kind of failure this is, in the chapters' terms; `None` for what is not the
    /// kernel's fault (no NVRTC, no device) or not a run at all (a missing kernel).
    pub fn expect(&self) -> Option<Expect> {
        match self.reason()? {
            Reason::Check(expect) => Some(expect),
            Reason::BankConflicts | Reason::TooSlow => None,
        }
    }

    /// Why the file fails, as an exercise states it: a checker's kind, or a missed goal.
    pub fn reason(&self) -> Option<Reason> {
        let expect = match self {
            Self::Goal(missed) => {
                return Some(match **missed {
                    Missed::Banks { .. } => Reason::BankConflicts,
                    Missed::Slower { .. } => Reason::TooSlow,
                });
            }
            Self::Compile { .. } => Some(Expect::CompileError),
            Self::Case(case) => match case.findings.first().map(|f| f.kind) {
                Some(FindingKind::Race { .. }) => Some(Expect::Race),
                Some(FindingKind::BarrierDivergence) => Some(Expect::BarrierDivergence),
                Some(FindingKind::OutOfBounds { .. } | FindingKind::Misaligned { .. }) => {
                    Some(Expect::OutOfBounds)
                }
                Some(
                    FindingKind::Deadlock | FindingKind::StepBudgetExhausted | FindingKind::Stuck,
                ) => Some(Expect::Deadlock),
                // Reading memory nothing wrote is how a kernel computes garbage: with a wrong
                // result it is the wrong result the exercise states, named by initcheck.
                Some(FindingKind::UninitializedRead { .. }) | None if case.wrong.is_some() => {
                    Some(Expect::WrongResult)
                }
                // The rest (a failed assert, heap misuse, warp-sync misuse…) is no exercise's
                // stated failure yet; the report still shows it.
                Some(_) => None,
                None => None,
            },
            Self::NoNvrtc | Self::Kernel(_) | Self::Setup(_) => None,
        };
        expect.map(Reason::Check)
    }

    /// The lines of the learner's file this failure names: the checkers' findings, or the
    /// lines of NVRTC's errors.
    pub fn lines(&self, path: &str) -> Vec<u32> {
        match self {
            Self::Case(case) => {
                let mut lines: Vec<u32> = case.findings.iter().flat_map(Finding::lines).collect();
                lines.sort_unstable();
                lines.dedup();
                lines
            }
            Self::Compile { log } => log
                .lines()
                .filter(|line| line.contains(": error"))
                .filter_map(|line| line.strip_prefix(path)?.strip_prefix(':'))
                .filter_map(|rest| rest.split(':').next()?.parse().ok())
                .collect(),
            Self::Goal(missed) => missed.lines(),
            _ => Vec::new(),
        }
    }
}

/// Where a check runs.
#[derive(Debug, Clone, Copy)]
pub struct Options {
    /// `emu`: the emulator only; `auto`: the emulator, then a GPU when there is one; `cuda`:
    /// both, and no GPU is an error.
    pub backend: BackendChoice,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            backend: BackendChoice::Auto,
        }
    }
}

/// What a check of one file found.
#[derive(Debug, Clone)]
pub struct Report {
    pub exercise: &'static str,
    pub path: String,
    /// The file as checked, so reports can quote its lines.
    pub source: String,
    pub outcome: Result<Passed, Failure>,
}

impl Report {
    pub fn passed(&self) -> bool {
        self.outcome.is_ok()
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Passed {
    pub emulator_cases: u32,
    pub schedules: usize,
    pub gpu: GpuRun,
    /// The exercise's goals, met or skipped, on the emulator then the GPU.
    pub goals: Vec<Outcome>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GpuRun {
    Ran {
        device: String,
        cases: u32,
    },
    /// Why not: no driver, `--backend emu`.
    Skipped(String),
}

/// Checks `source` as the learner's file of `exercise`.
pub fn check_source(exercise: &Exercise, source: &str, options: Options) -> Report {
    let path = exercise.path();
    let outcome = run_checks(exercise, &path, source, options);
    Report {
        exercise: exercise.name,
        path,
        source: source.to_string(),
        outcome,
    }
}

/// Seeds an exercise's cases from its name, so every check of it draws the same ones.
pub fn seed_of(name: &str) -> u64 {
    let hash = harness::kernel::source_hash(name);
    u64::from_str_radix(&hash, 16).unwrap_or(0) % 1_000_000
}

fn run_checks(
    exercise: &Exercise,
    path: &str,
    source: &str,
    options: Options,
) -> Result<Passed, Failure> {
    let mut names = vec![exercise.start.kernel().entry];
    if exercise.solution.entry != names[0] {
        names.push(exercise.solution.entry);
    }
    let program = Program::compile(path, source, names)?;
    let seed = seed_of(exercise.name);
    let emulator_budget = Budget::emulator(seed);
    let mut emulator = Device::open(BackendChoice::Emu).map_err(setup)?;
    emulator.set_emu_settings(EmuSettings {
        // A kernel that never finishes is stopped long before the default budget: the cases
        // here are small.
        step_budget: 20_000_000,
        ..EmuSettings::default()
    });
    let emulator_cases = exercise
        .check
        .run(&program, &mut emulator, &emulator_budget)?;
    let mut goals = exercise.check.goals(&program, &mut emulator)?;
    // Only a kernel the emulator passed goes near a GPU: its checkers would have caught a
    // barrier some threads skip or a spin that never ends, which can hang a real one.
    let gpu = match options.backend {
        BackendChoice::Emu => GpuRun::Skipped("--backend emu".into()),
        BackendChoice::Auto if !cuda_driver_present() => {
            GpuRun::Skipped("no NVIDIA GPU here".into())
        }
        BackendChoice::Auto | BackendChoice::Cuda => {
            let mut device = match Device::open(BackendChoice::Cuda) {
                Ok(device) => device,
                Err(error @ (HarnessError::NoDriver | HarnessError::NoDevice(_)))
                    if options.backend == BackendChoice::Auto =>
                {
                    return Ok(Passed {
                        emulator_cases,
                        schedules: emulator_budget.schedules.len(),
                        gpu: GpuRun::Skipped(error.to_string()),
                        goals,
                    });
                }
                Err(error) => return Err(setup(error)),
            };
            let cases = exercise
                .check
                .run(&program, &mut device, &Budget::gpu(seed))?;
            // A goal the emulator skipped (speed) takes the GPU's outcome.
            let measured = exercise.check.goals(&program, &mut device)?;
            for (kept, gpu) in goals.iter_mut().zip(measured) {
                if matches!(kept, Outcome::Skipped(_)) {
                    *kept = gpu;
                }
            }
            GpuRun::Ran {
                device: device.name().to_string(),
                cases,
            }
        }
    };
    Ok(Passed {
        emulator_cases,
        schedules: emulator_budget.schedules.len(),
        gpu,
        goals,
    })
}

fn setup(error: HarnessError) -> Failure {
    Failure::Setup(error.to_string())
}
