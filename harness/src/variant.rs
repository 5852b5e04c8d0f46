//! The registry every chapter exposes: which kernel, how it should behave, and how to check it.

use std::fmt;

use ptx_emu::{Finding, FindingKind};

use crate::kernel::KernelSource;

/// How a variant behaves; the binary, the tests and the book all read it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Expect {
    /// Matches the CPU on every input and shape its docs allow; the checkers report nothing.
    Correct,
    /// Differs from the CPU on some allowed input, found by proptest.
    WrongResult,
    /// racecheck reports a hazard at the kernel's `// BUG:` line.
    Race,
    /// synccheck reports a barrier not reached by the whole block, at the `// BUG:` line.
    /// Emulator-only: a real GPU may hang.
    BarrierDivergence,
    /// memcheck reports an access outside its allocation at the `// BUG:` line.
    OutOfBounds,
    /// Threads wait forever. Emulator-only.
    Deadlock,
    /// NVRTC refuses the kernel at the `// BUG:` line.
    CompileError,
}

impl Expect {
    pub fn is_correct(self) -> bool {
        self == Self::Correct
    }

    /// Variants that could hang or corrupt a real GPU never run there.
    pub fn is_emulator_only(self) -> bool {
        matches!(self, Self::BarrierDivergence | Self::Deadlock)
    }

    /// The tag that opens the kernel file's first line: `// FIXED:` or `// BROKEN(race):`.
    pub fn header_tag(self) -> &'static str {
        match self {
            Self::Correct => "FIXED",
            Self::WrongResult => "BROKEN(wrong result)",
            Self::Race => "BROKEN(race)",
            Self::BarrierDivergence => "BROKEN(barrier divergence)",
            Self::OutOfBounds => "BROKEN(out of bounds)",
            Self::Deadlock => "BROKEN(deadlock)",
            Self::CompileError => "BROKEN(compile error)",
        }
    }

    /// Whether the emulator's findings for one launch show what this expectation promises,
    /// at `bug_line` where the kind names a line. `Correct` demands no findings at all;
    /// `WrongResult` and `CompileError` are decided by results and NVRTC, not by checkers.
    pub fn is_shown_by(self, findings: &[Finding], bug_line: Option<u32>) -> bool {
        let at_line =
            |finding: &Finding| bug_line.is_none_or(|line| finding.lines().contains(&line));
        match self {
            Self::Correct => findings.is_empty(),
            Self::WrongResult | Self::CompileError => true,
            Self::Race => findings.iter().any(|f| {
                matches!(
                    f.kind,
                    FindingKind::Race { .. } | FindingKind::StreamRace { .. }
                ) && at_line(f)
            }),
            Self::BarrierDivergence => findings
                .iter()
                .any(|f| matches!(f.kind, FindingKind::BarrierDivergence) && at_line(f)),
            Self::OutOfBounds => findings
                .iter()
                .any(|f| matches!(f.kind, FindingKind::OutOfBounds { .. }) && at_line(f)),
            Self::Deadlock => findings.iter().any(|f| {
                matches!(
                    f.kind,
                    FindingKind::Deadlock
                        | FindingKind::StepBudgetExhausted
                        | FindingKind::Stuck
                        | FindingKind::StreamsStuck
                )
            }),
        }
    }
}

impl fmt::Display for Expect {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Correct => "correct",
            Self::WrongResult => "wrong result",
            Self::Race => "race",
            Self::BarrierDivergence => "barrier divergence",
            Self::OutOfBounds => "out of bounds",
            Self::Deadlock => "deadlock",
            Self::CompileError => "compile error",
        })
    }
}

/// One numbered step of a chapter. `K` is the chapter's own description of how to run it.
#[derive(Debug, Clone, Copy)]
pub struct Variant<K: 'static = ()> {
    /// Short name for `--variant`, e.g. `racy-increment`.
    pub name: &'static str,
    pub kernel: KernelSource,
    pub expect: Expect,
    /// One line for the walk-through and `--list`.
    pub summary: &'static str,
    pub kind: K,
}

impl<K> Variant<K> {
    /// The line checker reports must name: the kernel's `// BUG:` marker.
    pub fn bug_line(&self) -> Option<u32> {
        self.kernel.bug_line()
    }

    /// `kernels/…cu:LINE` of the `// BUG:` marker.
    pub fn bug_location(&self) -> Option<String> {
        self.bug_line()
            .map(|line| format!("{}:{line}", self.kernel.path))
    }

    /// Problems with how the kernel file presents this variant: a first line that does not
    /// carry the expectation's tag, or a broken kernel without its `// BUG:` marker.
    pub fn header_problems(&self) -> Vec<String> {
        let mut problems = Vec::new();
        let first = self.kernel.source.lines().next().unwrap_or_default();
        let tag = format!("// {}:", self.expect.header_tag());
        if !first.starts_with(&tag) {
            problems.push(format!(
                "{} should start with `{tag}`, not `{first}`",
                self.kernel.path
            ));
        }
        for header in ["Thread mapping:", "Shared memory:", "Launch:"] {
            if !self
                .kernel
                .source
                .lines()
                .take(8)
                .any(|line| line.contains(header))
            {
                problems.push(format!(
                    "{} lacks the `{header}` header line",
                    self.kernel.path
                ));
            }
        }
        let needs_bug = !matches!(
            self.expect,
            Expect::Correct | Expect::WrongResult | Expect::Deadlock
        );
        if needs_bug && self.bug_line().is_none() {
            problems.push(format!(
                "{} is {} but marks no line with `// BUG:`",
                self.kernel.path, self.expect
            ));
        }
        if self.expect.is_correct() && self.bug_line().is_some() {
            problems.push(format!(
                "{} is FIXED but still carries a `// BUG:` marker",
                self.kernel.path
            ));
        }
        problems
    }
}

/// Everything wrong with how a chapter's kernel files present its variants: headers, `// BUG:`
/// markers, and file numbers that do not follow the list's teaching order.
pub fn registry_problems<K>(variants: &[Variant<K>]) -> Vec<String> {
    let mut problems: Vec<String> = variants.iter().flat_map(Variant::header_problems).collect();
    for (index, variant) in variants.iter().enumerate() {
        let number = format!("/{:02}_", index + 1);
        if !variant.kernel.path.contains(&number) {
            problems.push(format!(
                "{} is variant {} in the list, so its file should be numbered {:02}",
                variant.kernel.path,
                index + 1,
                index + 1
            ));
        }
    }
    problems
}

/// Finds a variant by `--variant` name, with the known names in the error.
pub fn find_variant<'a, K>(
    variants: &'a [Variant<K>],
    name: &str,
) -> Result<&'a Variant<K>, String> {
    variants.iter().find(|v| v.name == name).ok_or_else(|| {
        let known: Vec<_> = variants.iter().map(|v| v.name).collect();
        format!(
            "unknown variant `{name}`; this chapter has: {}",
            known.join(", ")
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const FIXED_SOURCE: &str = "// FIXED: counts with atomicAdd\n// Thread mapping: one per element\n// Shared memory: none\n// Launch: any\n";
    const RACY_SOURCE: &str = "// BROKEN(race): lost updates\n// Thread mapping: one per element\n// Shared memory: none\n// Launch: any\nx[0] += 1; // BUG: unordered\n";

    fn variant(path: &'static str, source: &'static str, expect: Expect) -> Variant {
        Variant {
            name: "v",
            kernel: KernelSource {
                path,
                entry: "k",
                source,
                committed_ptx: "",
                own: None,
            },
            expect,
            summary: "",
            kind: (),
        }
    }

    #[test]
    fn a_well_presented_registry_has_no_problems() {
        let variants = [
            variant("kernels/c/01_racy.cu", RACY_SOURCE, Expect::Race),
            variant("kernels/c/02_fixed.cu", FIXED_SOURCE, Expect::Correct),
        ];
        assert_eq!(registry_problems(&variants), Vec::<String>::new());
        assert_eq!(
            variants[0].bug_location().as_deref(),
            Some("kernels/c/01_racy.cu:5")
        );
    }

    #[test]
    fn wrong_tags_missing_markers_and_order_are_reported() {
        let variants = [
            variant("kernels/c/02_fixed.cu", FIXED_SOURCE, Expect::Correct),
            variant("kernels/c/01_racy.cu", FIXED_SOURCE, Expect::Race),
        ];
        let problems = registry_problems(&variants);
        assert_eq!(problems.len(), 4, "{problems:#?}");
        assert!(
            problems[0].contains("should start with `// BROKEN(race):`"),
            "{problems:#?}"
        );
        assert!(
            problems[1].contains("marks no line with `// BUG:`"),
            "{problems:#?}"
        );
        assert!(
            problems[2].contains("02_fixed.cu is variant 1"),
            "{problems:#?}"
        );
        assert!(
            problems[3].contains("01_racy.cu is variant 2"),
            "{problems:#?}"
        );
    }
}
