//! Goals beyond a right answer: no shared-memory bank conflicts worse than some number of ways
//! (counted by the emulator), and a speed goal on a GPU (beat a chapter kernel's time, measured
//! as the chapters measure: a warm-up launch, then the mean of [`REPETITIONS`] launches timed
//! with CUDA events). A check with goals measures them in [`crate::Check::goals`], after every
//! generated case has passed.

use harness::{Device, EmuSettings, LaunchReport};
use ptx_emu::BankConflicts;

use crate::check::Failure;
use crate::program::Program;

/// Timed launches per kernel, after one warm-up: the chapters' walk-throughs use 10.
pub const REPETITIONS: u32 = 10;

/// What a goal came to, for the ✓ screen.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// Met, and how: `at most 1-way on every shared access (the emulator counts banks)`.
    Met(String),
    /// Not measured here, and why: a speed goal on the emulator.
    Skipped(String),
}

/// A goal the learner's kernel did not reach.
#[derive(Debug, Clone)]
pub enum Missed {
    /// Shared accesses of the learner's file worse than `max_ways`-way.
    Banks {
        max_ways: u32,
        /// The lines over the goal, in line order.
        over: Vec<BankConflicts>,
        /// The launch they were counted in: `64 × 48 floats, grid 2 × 2 × block 32 × 8`.
        case: String,
    },
    /// Slower than the kernel to beat.
    Slower {
        rival: &'static str,
        yours_ms: f64,
        rival_ms: f64,
        device: String,
        /// The input both were timed on.
        case: String,
    },
}

impl Missed {
    /// The lines of the learner's file this names.
    pub fn lines(&self) -> Vec<u32> {
        match self {
            Self::Banks { over, .. } => {
                let mut lines: Vec<u32> = over.iter().map(|c| c.at.line).collect();
                lines.dedup();
                lines
            }
            Self::Slower { .. } => Vec::new(),
        }
    }
}

/// Counts the bank conflicts of `launch` (one or more launches of the learner's kernels, on
/// the emulator) and holds every shared access of the learner's file to `max_ways`. On a GPU
/// it is not measured again: the emulator's count is the same program's.
pub fn banks(
    device: &mut Device,
    program: &Program,
    max_ways: u32,
    case: &str,
    launch: impl FnOnce(&mut Device) -> Result<Vec<LaunchReport>, Failure>,
) -> Result<Outcome, Failure> {
    let goal = if max_ways == 1 {
        "no bank conflicts".to_string()
    } else {
        format!("at most {max_ways}-way bank conflicts")
    };
    let Some(settings) = device.emu_settings() else {
        return Ok(Outcome::Met(format!(
            "{goal} (counted on the emulator; the GPU runs the same code)"
        )));
    };
    device.set_emu_settings(EmuSettings {
        bank_conflicts: true,
        ..settings
    });
    let reports = launch(device);
    device.set_emu_settings(settings);
    let mut counted: Vec<BankConflicts> = Vec::new();
    for report in reports? {
        for line in report.bank_conflicts {
            if line.at.file != program.path {
                continue;
            }
            match counted
                .iter_mut()
                .find(|seen| seen.at.line == line.at.line && seen.write == line.write)
            {
                Some(seen) => {
                    seen.requests += line.requests;
                    seen.wavefronts += line.wavefronts;
                    seen.ideal_wavefronts += line.ideal_wavefronts;
                    seen.worst_ways = seen.worst_ways.max(line.worst_ways);
                }
                None => counted.push(line),
            }
        }
    }
    counted.sort_by_key(|line| (line.at.line, line.write));
    let over: Vec<BankConflicts> = counted
        .iter()
        .filter(|line| line.worst_ways > max_ways)
        .cloned()
        .collect();
    if !over.is_empty() {
        return Err(Failure::Goal(Box::new(Missed::Banks {
            max_ways,
            over,
            case: case.to_string(),
        })));
    }
    let worst = counted.iter().map(|l| l.worst_ways).max().unwrap_or(0);
    let requests: u64 = counted.iter().map(|l| l.requests).sum();
    Ok(Outcome::Met(format!(
        "{goal}: {requests} warp accesses to shared memory, the worst {worst}-way (the emulator counts banks)"
    )))
}

/// Times the learner's kernel and the chapter's `rival` on the same input and wants the
/// learner's faster; each closure enqueues one launch. On the emulator, which models no time,
/// the goal is skipped with that reason.
pub fn beat(
    device: &mut Device,
    rival: &'static str,
    case: &str,
    mut yours: impl FnMut(&mut Device) -> harness::Result<()>,
    mut theirs: impl FnMut(&mut Device) -> harness::Result<()>,
) -> Result<Outcome, Failure> {
    if !device.kind().is_cuda() {
        return Ok(Outcome::Skipped(format!(
            "speed goal (beat {rival} on a GPU): skipped, the emulator models no time"
        )));
    }
    let setup = |error: harness::HarnessError| Failure::Setup(error.to_string());
    // Each is timed twice, interleaved, and keeps its better mean: a clock that changes
    // between the two measurements then cannot decide the race on its own.
    let mut yours_ms = f64::INFINITY;
    let mut rival_ms = f64::INFINITY;
    for _ in 0..2 {
        let ms = device.time_ms(REPETITIONS, &mut yours).map_err(setup)?;
        yours_ms = yours_ms.min(ms.unwrap_or(f64::NAN));
        let ms = device.time_ms(REPETITIONS, &mut theirs).map_err(setup)?;
        rival_ms = rival_ms.min(ms.unwrap_or(f64::NAN));
    }
    let device_name = device.name().to_string();
    if yours_ms < rival_ms {
        return Ok(Outcome::Met(format!(
            "speed goal met on {device_name}: {yours_ms:.3} ms a launch against {rival}'s {rival_ms:.3} ms ({:.2}×), {case}",
            rival_ms / yours_ms
        )));
    }
    Err(Failure::Goal(Box::new(Missed::Slower {
        rival,
        yours_ms,
        rival_ms,
        device: device_name,
        case: case.to_string(),
    })))
}
