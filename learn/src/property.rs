//! Generated cases for a learner's kernel: the chapter's proptest strategies, run under each
//! emulator schedule (or once on a GPU), with the smallest failing case kept for the report.

use std::fmt::{Debug, Display};
use std::time::Instant;

use harness::verify::Comparison;
use harness::{Device, Finding, HarnessError, LaunchShape, Schedule};
use proptest::strategy::{Strategy, ValueTree};
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};

use crate::check::{CaseFailure, Failure, Wrong};

/// How many cases a check runs, and where.
#[derive(Debug, Clone)]
pub struct Budget {
    /// Cases per schedule (on a GPU: in all).
    pub cases: u32,
    pub shrink_iters: u32,
    /// Milliseconds proptest may spend making a failing case smaller.
    pub shrink_ms: u32,
    /// The emulator's schedules; a GPU keeps its own order.
    pub schedules: Vec<Schedule>,
    pub on_gpu: bool,
    /// Seeds the cases, so a check of the same file shows the same case every time.
    pub seed: u64,
}

impl Budget {
    /// A few seconds on the emulator: sizes stay small, every schedule runs (the lanes
    /// schedule too, so a warp that only works in lockstep is caught).
    pub fn emulator(seed: u64) -> Self {
        Self {
            cases: 4,
            shrink_iters: 256,
            shrink_ms: 6_000,
            schedules: vec![
                Schedule::Hardware,
                Schedule::Random { seed },
                Schedule::Adversarial { seed },
                Schedule::Lanes { seed },
            ],
            on_gpu: false,
            seed,
        }
    }

    /// A GPU: more cases, and sizes no emulator could afford.
    pub fn gpu(seed: u64) -> Self {
        Self {
            cases: 32,
            shrink_iters: 64,
            shrink_ms: 8_000,
            schedules: vec![Schedule::Hardware],
            on_gpu: true,
            seed,
        }
    }

    /// `emulator` or `gpu`, whichever this budget runs on.
    pub fn size<T>(&self, emulator: T, gpu: T) -> T {
        if self.on_gpu { gpu } else { emulator }
    }
}

/// What one generated case showed.
#[derive(Debug, Clone)]
pub struct Observed {
    /// What the case was, for the report: `("n", "97")`, `("launch", "grid 4 × block 32")`.
    pub facts: Vec<(String, String)>,
    pub findings: Vec<Finding>,
    pub wrong: Option<Wrong>,
    /// The harness refused or could not finish the launch.
    pub error: Option<String>,
    /// The axes of the launch's grid and block ([`Observed::launch`]).
    pub axes: [usize; 2],
    /// What the kernel printed with `printf`.
    pub printf: String,
    /// Buffers the kernel names otherwise than the host: `(host label, kernel parameter)`.
    pub received_as: Vec<(String, String)>,
}

impl Default for Observed {
    fn default() -> Self {
        Self {
            facts: Vec::new(),
            findings: Vec::new(),
            wrong: None,
            error: None,
            axes: [1, 1],
            received_as: Vec::new(),
            printf: String::new(),
        }
    }
}

impl Observed {
    pub fn new() -> Self {
        Self::default()
    }

    /// The case's launch: a fact, and the axes its reports name threads with.
    pub fn launch(mut self, shape: LaunchShape) -> Self {
        let axes = |d: harness::Dim3| match (d.y, d.z) {
            (1, 1) => 1,
            (_, 1) => 2,
            _ => 3,
        };
        self.axes = [axes(shape.grid), axes(shape.block)];
        self.fact("launch", shape)
    }

    pub fn fact(mut self, name: &str, value: impl Display) -> Self {
        self.facts.push((name.to_string(), value.to_string()));
        self
    }

    /// The case's findings, each said once: a host that launches several times (a tree of
    /// launches, a loop of generations) meets one bug in each, and the same report twice
    /// teaches nothing; its count adds up instead.
    pub fn findings(mut self, findings: Vec<Finding>) -> Self {
        let mut once: Vec<Finding> = Vec::with_capacity(findings.len());
        for finding in findings {
            let same = |seen: &&mut Finding| {
                Finding {
                    count: finding.count,
                    ..(*seen).clone()
                } == finding
            };
            match once.iter_mut().find(same) {
                Some(seen) => seen.count += finding.count,
                None => once.push(finding),
            }
        }
        self.findings = once;
        self
    }

    /// What a launch reported: its findings and what it printed.
    pub fn reported(mut self, report: harness::LaunchReport) -> Self {
        self.printf = report.printf;
        self.received_as = report.received_as;
        let wrong = self.wrong.take();
        self.wrong(wrong).findings(report.findings)
    }

    /// The first wrong value, named as the kernel names its buffer (`data[0]`, where the host
    /// calls it `out`), as the findings are.
    pub fn wrong(mut self, wrong: Option<Wrong>) -> Self {
        self.wrong = wrong.map(|mut wrong| {
            for (host, kernel) in &self.received_as {
                if let Some(rest) = wrong.what.strip_prefix(host.as_str())
                    && (rest.is_empty() || rest.starts_with('['))
                {
                    wrong.what = format!("{kernel}{rest}");
                    break;
                }
            }
            wrong
        });
        self
    }

    pub fn error(mut self, error: HarnessError) -> Self {
        self.error = Some(error.to_string());
        self
    }

    pub fn passed(&self) -> bool {
        self.findings.is_empty() && self.wrong.is_none() && self.error.is_none()
    }
}

/// Runs `case` on values drawn from `strategy`: `budget.cases` of them under each schedule.
/// The first failure is shrunk by proptest, and the smallest failing case comes back.
pub fn run<S>(
    device: &mut Device,
    budget: &Budget,
    strategy: S,
    case: impl Fn(&mut Device, &S::Value) -> Observed,
) -> Result<u32, Failure>
where
    S: Strategy,
    S::Value: Debug,
{
    let on_gpu = device.kind().is_cuda();
    let schedules = if on_gpu {
        vec![Schedule::Hardware]
    } else {
        budget.schedules.clone()
    };
    let mut total = 0;
    for (index, schedule) in schedules.into_iter().enumerate() {
        // Each schedule draws its own cases: a few per schedule add up to several times as
        // many shapes and inputs, and the first schedule keeps the exercise's own seed.
        let seed = budget.seed ^ (index as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        let outcome = device.with_schedule(schedule, |device| {
            search(device, budget, seed, &strategy, &case)
        });
        match outcome {
            Ok(ran) => total += ran,
            Err(Search::Failed(seen)) => {
                let seen = *seen;
                let on = if on_gpu {
                    device.name().to_string()
                } else {
                    describe_schedule(schedule)
                };
                return Err(Failure::Case(Box::new(CaseFailure {
                    on,
                    facts: seen.facts,
                    findings: seen.findings,
                    wrong: seen.wrong,
                    error: seen.error,
                    axes: seen.axes,
                    printf: seen.printf,
                })));
            }
            Err(Search::Abort(reason)) => return Err(Failure::Setup(reason)),
        }
    }
    Ok(total)
}

enum Search {
    /// The smallest failing case found.
    Failed(Box<Observed>),
    Abort(String),
}

/// proptest's generate-then-shrink, driven here rather than by `TestRunner::run`, which
/// prints to stderr when it stops shrinking: the watch screen must stay the only output.
fn search<S>(
    device: &mut Device,
    budget: &Budget,
    seed: u64,
    strategy: &S,
    case: &impl Fn(&mut Device, &S::Value) -> Observed,
) -> Result<u32, Search>
where
    S: Strategy,
    S::Value: Debug,
{
    let config = Config {
        cases: budget.cases,
        failure_persistence: None,
        ..Config::default()
    };
    let mut runner = TestRunner::new_with_rng(config, seeded(seed));
    for _ in 0..budget.cases {
        let mut tree = strategy
            .new_tree(&mut runner)
            .map_err(|reason| Search::Abort(reason.to_string()))?;
        let seen = case(device, &tree.current());
        if seen.passed() {
            continue;
        }
        let mut smallest = seen;
        let started = Instant::now();
        let mut iterations = 0;
        let mut more = tree.simplify();
        while more
            && iterations < budget.shrink_iters
            && started.elapsed().as_millis() < u128::from(budget.shrink_ms)
        {
            iterations += 1;
            let seen = case(device, &tree.current());
            more = if seen.passed() {
                tree.complicate()
            } else {
                smallest = seen;
                tree.simplify()
            };
        }
        return Err(Search::Failed(Box::new(smallest)));
    }
    Ok(budget.cases)
}

fn seeded(seed: u64) -> TestRng {
    let mut bytes = [0u8; 32];
    for (index, chunk) in bytes.chunks_mut(8).enumerate() {
        chunk.copy_from_slice(&(seed ^ (index as u64).wrapping_mul(0x9e37_79b9)).to_le_bytes());
    }
    TestRng::from_seed(RngAlgorithm::ChaCha, &bytes)
}

pub fn describe_schedule(schedule: Schedule) -> String {
    match schedule {
        Schedule::Hardware => "the emulator, hardware schedule".into(),
        Schedule::Random { seed } => format!("the emulator, random schedule (seed {seed})"),
        Schedule::Adversarial { seed } => {
            format!("the emulator, adversarial schedule (seed {seed})")
        }
        Schedule::Lanes { seed } => format!("the emulator, lanes schedule (seed {seed})"),
    }
}

/// The first difference a comparison found, as the report shows it: `y[97]`.
pub fn wrong_from<T: Display>(what: &str, comparison: &Comparison<T>) -> Option<Wrong> {
    if let Some((got, want)) = comparison.length_mismatch {
        return Some(Wrong {
            what: what.to_string(),
            expected: format!("{want} values"),
            got: format!("{got} values"),
            summary: None,
        });
    }
    let first = comparison.first_mismatches.first()?;
    let (got, expected) = (first.got.to_string(), first.want.to_string());
    let differ = how_many_differ(comparison.mismatch_count, comparison.len, "values");
    let summary = match (differ, ulps_apart(&got, &expected)) {
        (differ, Some(ulps)) => {
            let s = if ulps == 1 { "" } else { "s" };
            let close = format!(
                "{ulps} ulp{s} apart, the last bits of a float: compared bit for bit, so how each \
                 value is rounded matters"
            );
            Some(differ.map_or(close.clone(), |differ| format!("{differ}; {close}")))
        }
        (differ, None) => differ,
    };
    Some(Wrong {
        what: format!("{what}[{}]", first.index),
        expected,
        got,
        summary,
    })
}

/// How many representable `f32`s apart two printed floats are, when they are a few apart: a
/// rounding difference (a fused multiply-add, an order of additions), not a wrong formula.
fn ulps_apart(got: &str, expected: &str) -> Option<u32> {
    let (got, expected) = (got.parse::<f32>().ok()?, expected.parse::<f32>().ok()?);
    if !got.is_finite()
        || !expected.is_finite()
        || got.is_sign_negative() != expected.is_sign_negative()
    {
        return None;
    }
    let distance = got.to_bits().abs_diff(expected.to_bits());
    (1..=4).contains(&distance).then_some(distance)
}

/// `3 of 97 values differ`; nothing when the result is a single value, whose line says it all.
pub fn how_many_differ(count: usize, len: usize, plural: &str) -> Option<String> {
    match (count, len) {
        (_, 0 | 1) => None,
        (1, _) => Some(format!("1 of {len} {plural} differs")),
        _ => Some(format!("{count} of {len} {plural} differ")),
    }
}

/// A float the CPU computed in f64 and the kernel in f32, as the reference a result must meet:
/// `0.46423 ± 2.5e-7`, or `0 exactly` where the bound is nothing (a sum of nothing).
pub fn within_bound(want: f64, bound: f64) -> String {
    // as f32: the precision of the kernel's result it is compared with
    let want = want as f32;
    let bound = bound.abs();
    if bound > 0.0 {
        format!("{want} ± {bound:.1e}")
    } else {
        format!("{want} exactly")
    }
}

/// The index of the first difference, to centre a data excerpt on.
pub fn first_index<T>(comparison: &Comparison<T>) -> Option<usize> {
    comparison.first_mismatches.first().map(|m| m.index)
}

/// A few values of `values` around `center` (the start when `None`): `[94..99] 0.25, -0.5, …`,
/// with the length, so a report shows the data without printing all of it.
pub fn excerpt<T: Debug>(values: &[T], center: Option<usize>) -> String {
    if values.is_empty() {
        return "0 values".into();
    }
    let count = match values.len() {
        1 => "1 value".to_string(),
        len => format!("{len} values"),
    };
    let center = center.unwrap_or(0).min(values.len() - 1);
    let start = center.saturating_sub(2);
    let end = (start + 5).min(values.len());
    let shown: Vec<String> = values[start..end]
        .iter()
        .map(|v| format!("{v:?}"))
        .collect();
    let mut text = format!("{count}; [{start}..{end}] {}", shown.join(", "));
    if text.chars().count() > 66 {
        text = text.chars().take(65).collect::<String>() + "…";
    }
    text
}

#[cfg(test)]
mod tests {
    use super::ulps_apart;

    #[test]
    fn floats_a_rounding_apart_are_counted_in_ulps() {
        // saxpy with __fmul_rn: the product rounded before the add, one bit off a.mul_add.
        assert_eq!(ulps_apart("0.19154036", "0.19154035"), Some(1));
        assert_eq!(ulps_apart("-2.5000002", "-2.5"), Some(1));
        // a wrong formula, a sign, an integer count: not a rounding
        assert_eq!(ulps_apart("0.5", "0.25"), None);
        assert_eq!(ulps_apart("-0.0", "0.0"), None);
        assert_eq!(ulps_apart("7", "8"), None);
        assert_eq!(ulps_apart("1.0", "1.0"), None);
        assert_eq!(ulps_apart("NaN", "1.0"), None);
    }
}
