//! Checking a learner's file: compile, run on the emulator under every schedule with the
//! checkers on, then on a GPU when there is one.

use harness::backend::cuda_driver_present;
use harness::{BackendChoice, Device, EmuSettings, Expect, Finding, FindingKind, HarnessError};

use crate::exercise::{Exercise, Reason};
use crate::goal::{Missed, Outcome};
use crate::program::{ParamMismatch, Program, parameter_mismatch};
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
    /// NVRTC is not installed and could not be fetched, so nothing can be compiled; the
    /// sentence says why and what to run.
    NoNvrtc(String),
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
    /// Axes the launch used, grid then block (1 to 3): a report names a thread (0,0) of a 2D
    /// block as such, not as thread 0.
    pub axes: [usize; 2],
    /// What the kernel printed with `printf` in that case.
    pub printf: String,
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

impl Wrong {
    /// When the kernel left `fill`, the value the buffer held before the launch, `note` (which
    /// says so) follows the summary: the element is most often one no thread wrote.
    pub fn unwritten_if(mut self, fill: &str, note: &str) -> Wrong {
        if self.got == fill {
            self.summary = Some(match self.summary {
                Some(count) => format!("{count}; {note}"),
                None => note.to_string(),
            });
        }
        self
    }
}

impl Failure {
    /// What kind of failure this is, in the chapters' terms ([`Failure::reason`]'s); `None`
    /// for what is not the kernel's fault (no NVRTC, no device), not a run at all (a missing
    /// kernel), or a missed goal.
    pub fn expect(&self) -> Option<Expect> {
        match self.reason()? {
            Reason::Check(expect) => Some(expect),
            Reason::BankConflicts | Reason::TooSlow => None,
        }
    }

    /// Why the file fails, first of [`Failure::reasons`]: what the screen leads with.
    pub fn reason(&self) -> Option<Reason> {
        self.reasons().first().copied()
    }

    /// Every reason the file fails, as an exercise states one, in the order the screen shows
    /// them: each checker finding's kind (once), then a wrong result; a compile error; a
    /// missed goal. Empty for what is not the kernel's fault or not a run at all.
    pub fn reasons(&self) -> Vec<Reason> {
        match self {
            Self::Goal(missed) => vec![match **missed {
                Missed::Banks { .. } => Reason::BankConflicts,
                Missed::Slower { .. } => Reason::TooSlow,
            }],
            Self::Compile { .. } => vec![Reason::Check(Expect::CompileError)],
            Self::Case(case) => {
                let mut reasons = Vec::new();
                let findings = case.findings.iter().filter_map(|f| finding_reason(f, case));
                let wrong = case
                    .wrong
                    .as_ref()
                    .map(|_| Reason::Check(Expect::WrongResult));
                for reason in findings.chain(wrong) {
                    if !reasons.contains(&reason) {
                        reasons.push(reason);
                    }
                }
                reasons
            }
            Self::NoNvrtc(_) | Self::Kernel(_) | Self::Setup(_) => Vec::new(),
        }
    }

    /// The findings that give no reason an exercise can state (a failed assert, an
    /// uninitialized read that left the result right…): shown, but explained by no statement.
    pub fn unexplained(&self) -> Vec<&Finding> {
        match self {
            Self::Case(case) => case
                .findings
                .iter()
                .filter(|finding| finding_reason(finding, case).is_none())
                .collect(),
            _ => Vec::new(),
        }
    }

    /// The lines of the learner's file this failure names: the checkers' findings, or the
    /// lines of NVRTC's errors.
    pub fn lines(&self, path: &str) -> Vec<u32> {
        self.lines_where(path, |_| true)
    }

    /// The lines of the learner's file named for `reason` only: the findings of that kind (a
    /// race's lines, not those of an access out of bounds in the same case), NVRTC's errors,
    /// the lines that missed a goal.
    pub fn lines_for(&self, reason: Reason, path: &str) -> Vec<u32> {
        if !self.reasons().contains(&reason) {
            return Vec::new();
        }
        match self {
            Self::Case(case) => self.lines_where(path, |finding| {
                finding_reason(finding, case) == Some(reason)
            }),
            _ => self.lines(path),
        }
    }

    fn lines_where(&self, path: &str, keep: impl Fn(&Finding) -> bool) -> Vec<u32> {
        match self {
            Self::Case(case) => {
                let mut lines: Vec<u32> = case
                    .findings
                    .iter()
                    .filter(|finding| keep(finding))
                    .flat_map(Finding::lines)
                    .collect();
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
    /// Lines the screen leads with when the file fails: parameters the kernel names otherwise
    /// than the host passes them ([`ParamMismatch::Names`]).
    pub notes: Vec<String>,
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
    // A file that does not compile has other things to fix first.
    let notes = match (&outcome, learner_mismatch(exercise, source)) {
        (Err(failure), Some(ParamMismatch::Names(line)))
            if !matches!(failure, Failure::Compile { .. }) =>
        {
            vec![line]
        }
        _ => Vec::new(),
    };
    Report {
        exercise: exercise.name,
        path,
        source: source.to_string(),
        outcome,
        notes,
    }
}

/// The learner's kernel (by the start's name, else the solution's) against the parameters the
/// host passes, which are the solution's.
fn learner_mismatch(exercise: &Exercise, source: &str) -> Option<ParamMismatch> {
    let host = &exercise.solution;
    let mismatch = [exercise.start.kernel().entry, host.entry]
        .into_iter()
        .find_map(|name| parameter_mismatch(source, name, host))?;
    // Names the exercise's own file gave its parameters are no news to the learner: only a
    // list that differs from the file's as it started is worth the note.
    if let ParamMismatch::Names(_) = mismatch {
        let starting = exercise.starting_text();
        let unchanged = [exercise.start.kernel().entry, host.entry]
            .into_iter()
            .find_map(|name| parameter_mismatch(&starting, name, host))
            == Some(mismatch.clone());
        if unchanged {
            return None;
        }
    }
    Some(mismatch)
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
    // Before anything runs: a kernel that reads the host's values as other types.
    if let Some(ParamMismatch::Types(line)) = learner_mismatch(exercise, source) {
        return Err(Failure::Kernel(line));
    }
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

/// The reason one finding of `case` gives, in the chapters' terms.
pub(crate) fn finding_reason(finding: &Finding, case: &CaseFailure) -> Option<Reason> {
    let expect = match finding.kind {
        // Work on two devices (or streams) that touch the same bytes unordered is a race too:
        // a ring step that reads the chunk its neighbour is still writing.
        FindingKind::Race { .. } | FindingKind::StreamRace { .. } => Expect::Race,
        FindingKind::BarrierDivergence => Expect::BarrierDivergence,
        FindingKind::OutOfBounds { .. } | FindingKind::Misaligned { .. } => Expect::OutOfBounds,
        FindingKind::Deadlock | FindingKind::StepBudgetExhausted | FindingKind::Stuck => {
            Expect::Deadlock
        }
        // Reading memory nothing wrote is how a kernel computes garbage: with a wrong result it
        // is the wrong result the exercise states, named by initcheck.
        FindingKind::UninitializedRead { .. } if case.wrong.is_some() => Expect::WrongResult,
        // The rest (a failed assert, heap misuse, warp-sync misuse…, or an uninitialized read
        // that left the result right) is no exercise's stated failure yet; the report still
        // shows it.
        _ => return None,
    };
    Some(Reason::Check(expect))
}

fn setup(error: HarnessError) -> Failure {
    Failure::Setup(error.to_string())
}

#[cfg(test)]
mod tests {
    use harness::{Expect, Finding, FindingKind};
    use ptx_emu::{Access, AccessOp, Hazard, SourceLoc, Space, ThreadRef};

    use super::{CaseFailure, Failure, Wrong};
    use crate::exercise::Reason;

    fn finding(kind: FindingKind, line: u32) -> Finding {
        let access = Access {
            op: AccessOp::Write,
            thread: ThreadRef {
                block: [0, 0, 0],
                thread: [1, 0, 0],
            },
            at: SourceLoc {
                file: "exercises/ch4_atomics/01_racy_increment.cu".into(),
                line,
                inlined_at: None,
                inlined_into: None,
                called_from: None,
                ptx_line: 1,
            },
        };
        Finding {
            kind,
            count: 1,
            location: None,
            accesses: vec![access],
            threads: Vec::new(),
            why: "a test's finding".into(),
        }
    }

    fn race(line: u32) -> Finding {
        finding(
            FindingKind::Race {
                hazard: Hazard::WriteAfterWrite,
                space: Space::Global,
            },
            line,
        )
    }

    fn out_of_bounds(line: u32) -> Finding {
        finding(
            FindingKind::OutOfBounds {
                space: Space::Global,
            },
            line,
        )
    }

    fn uninitialized(line: u32) -> Finding {
        finding(
            FindingKind::UninitializedRead {
                space: Space::Shared,
            },
            line,
        )
    }

    fn case(findings: Vec<Finding>, wrong: bool) -> Failure {
        Failure::Case(Box::new(CaseFailure {
            on: "the emulator, hardware schedule".into(),
            facts: Vec::new(),
            findings,
            wrong: wrong.then(|| Wrong {
                what: "x[0]".into(),
                expected: "2".into(),
                got: "1".into(),
                summary: None,
            }),
            error: None,
            axes: [1, 1],
            printf: String::new(),
        }))
    }

    const PATH: &str = "exercises/ch4_atomics/01_racy_increment.cu";
    const RACE: Reason = Reason::Check(Expect::Race);
    const OUT_OF_BOUNDS: Reason = Reason::Check(Expect::OutOfBounds);
    const WRONG: Reason = Reason::Check(Expect::WrongResult);

    /// Every finding counts, not just the first: a race behind an access out of bounds is a
    /// race, and each reason names its own lines only.
    #[test]
    fn every_finding_gives_its_reason_and_its_own_lines() {
        let failure = case(vec![out_of_bounds(5), race(9), race(11)], true);
        assert_eq!(failure.reasons(), vec![OUT_OF_BOUNDS, RACE, WRONG]);
        assert_eq!(failure.reason(), Some(OUT_OF_BOUNDS));
        assert_eq!(failure.expect(), Some(Expect::OutOfBounds));
        assert_eq!(failure.lines(PATH), vec![5, 9, 11]);
        assert_eq!(failure.lines_for(RACE, PATH), vec![9, 11]);
        assert_eq!(failure.lines_for(OUT_OF_BOUNDS, PATH), vec![5]);
        assert_eq!(failure.lines_for(WRONG, PATH), Vec::<u32>::new());
        assert_eq!(
            failure.lines_for(Reason::Check(Expect::BarrierDivergence), PATH),
            Vec::<u32>::new()
        );
    }

    /// A host that launches several times meets one bug in each launch: the case says it once,
    /// with the sightings added up, and keeps findings that differ.
    #[test]
    fn a_finding_met_in_several_launches_is_said_once() {
        let observed = crate::property::Observed::new().findings(vec![
            race(15),
            out_of_bounds(20),
            race(15),
            race(16),
        ]);
        let lines: Vec<(u32, u64)> = observed
            .findings
            .iter()
            .map(|finding| (finding.lines()[0], finding.count))
            .collect();
        assert_eq!(lines, [(15, 2), (20, 1), (16, 1)]);
    }

    /// A finding that states no exercise's failure (an uninitialized read that left the result
    /// right) no longer hides the race after it.
    #[test]
    fn a_finding_with_no_reason_does_not_hide_the_next() {
        let failure = case(vec![uninitialized(3), race(7)], false);
        assert_eq!(failure.reasons(), vec![RACE]);
        assert_eq!(failure.expect(), Some(Expect::Race));
        assert_eq!(failure.lines_for(RACE, PATH), vec![7]);
        assert_eq!(failure.unexplained().len(), 1);
        assert!(case(vec![uninitialized(3)], false).reasons().is_empty());
        assert!(case(vec![uninitialized(3)], true).unexplained().is_empty());
    }

    /// Memory nothing wrote, with a wrong result: the wrong result the exercise states, at the
    /// line initcheck names; counted once.
    #[test]
    fn an_uninitialized_read_behind_a_wrong_result_names_its_line() {
        let failure = case(vec![uninitialized(28)], true);
        assert_eq!(failure.reasons(), vec![WRONG]);
        assert_eq!(failure.lines_for(WRONG, PATH), vec![28]);
        let plain = case(Vec::new(), true);
        assert_eq!(plain.reasons(), vec![WRONG]);
        assert!(plain.lines(PATH).is_empty());
    }

    #[test]
    fn a_compile_error_names_the_lines_of_its_errors() {
        let failure = Failure::Compile {
            log: format!(
                "{PATH}:20: error: \"j\" has already been declared\n{PATH}:26: warning #177-D: unused\n{PATH}:26: error: identifier \"tid\" is undefined\n"
            ),
        };
        let compile = Reason::Check(Expect::CompileError);
        assert_eq!(failure.reasons(), vec![compile]);
        assert_eq!(failure.lines_for(compile, PATH), vec![20, 26]);
        assert!(failure.lines_for(RACE, PATH).is_empty());
        assert!(Failure::NoNvrtc(String::new()).reasons().is_empty());
    }
}
