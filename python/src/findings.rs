//! A checker's finding as Python sees it: its kind, the text `racetrack check` prints, and the
//! source lines it names.

use ptx_emu::FindingKind;
use pyo3::prelude::*;

/// One finding of a launch.
#[pyclass(module = "racetrack._native", frozen, get_all)]
#[derive(Debug, Clone)]
pub struct Finding {
    /// As `racetrack check --json` names it: `"race"`, `"barrier-divergence"`,
    /// `"out-of-bounds"`, …
    pub kind: String,
    /// Which exception stands for it: `"race"`, `"sync"`, `"memory"` or `"other"` (a failed
    /// assert, a trap, a kernel that did not finish).
    pub category: String,
    /// The report, exactly as `racetrack check` prints it.
    pub text: String,
    /// Every source line it names, ascending.
    pub lines: Vec<u32>,
    /// The source files its accesses and threads are in, in order of first mention.
    pub files: Vec<String>,
    /// How many times the checkers saw it.
    pub count: u64,
    /// Its one-sentence explanation.
    pub why: String,
}

#[pymethods]
impl Finding {
    fn __repr__(&self) -> String {
        format!(
            "Finding(kind={:?}, lines={:?}, files={:?})",
            self.kind, self.lines, self.files
        )
    }

    fn __str__(&self) -> String {
        self.text.clone()
    }
}

impl From<&ptx_emu::Finding> for Finding {
    fn from(finding: &ptx_emu::Finding) -> Self {
        let (kind, category) = kind_names(finding.kind);
        let mut files: Vec<String> = Vec::new();
        let places = finding
            .accesses
            .iter()
            .map(|access| &access.at)
            .chain(finding.threads.iter().map(|group| &group.at));
        for at in places {
            if at.line != 0 && !files.contains(&at.file) {
                files.push(at.file.clone());
            }
        }
        Self {
            kind: kind.to_string(),
            category: category.to_string(),
            text: finding.to_string(),
            lines: finding.lines(),
            files,
            count: finding.count,
            why: finding.why.clone(),
        }
    }
}

/// (`--json`'s kind, the exception's category).
fn kind_names(kind: FindingKind) -> (&'static str, &'static str) {
    match kind {
        FindingKind::Race { .. } => ("race", "race"),
        FindingKind::StreamRace { .. } => ("stream-race", "race"),
        FindingKind::BarrierDivergence => ("barrier-divergence", "sync"),
        FindingKind::Deadlock => ("deadlock", "sync"),
        FindingKind::WarpSync { .. } => ("warp-sync", "sync"),
        FindingKind::StreamsStuck => ("streams-stuck", "sync"),
        FindingKind::OutOfBounds { .. } => ("out-of-bounds", "memory"),
        FindingKind::Misaligned { .. } => ("misaligned", "memory"),
        FindingKind::UninitializedRead { .. } => ("uninitialized-read", "memory"),
        FindingKind::UseAfterFree => ("use-after-free", "memory"),
        FindingKind::DoubleFree => ("double-free", "memory"),
        FindingKind::InvalidFree => ("invalid-free", "memory"),
        FindingKind::NoPeerAccess => ("no-peer-access", "memory"),
        FindingKind::StepBudgetExhausted => ("step-budget-exhausted", "other"),
        FindingKind::Stuck => ("stuck", "other"),
        FindingKind::AssertionFailed => ("assertion-failed", "other"),
        FindingKind::StackOverflow => ("stack-overflow", "other"),
        FindingKind::InvalidCallTarget => ("invalid-call-target", "other"),
        FindingKind::Trap => ("trap", "other"),
    }
}
