//! Pieces every chapter's walk-through prints the same way.

use std::io::Write;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};

pub use indicatif::ProgressBar;

use crate::backend::BackendKind;
use crate::device::{Device, Finding, Gpus, Schedule};
use crate::error::{HarnessError, Result};
use crate::variant::{Expect, Variant, find_variant};

/// How many findings a walk-through prints in full before summarising the rest.
pub const FINDINGS_SHOWN: usize = 2;

/// Whether [`working`] draws: off until a chapter binary turns it on (through
/// [`crate::cli::run_main`]), so tests that run a walk-through in a terminal stay quiet.
static SHOW_PROGRESS: AtomicBool = AtomicBool::new(false);

/// Lets [`working`] draw its progress lines, as a chapter binary run by a person does.
pub fn show_progress() {
    SHOW_PROGRESS.store(true, Ordering::Relaxed);
}

/// A progress line for work that may take more than a second, so the screen never sits still:
/// a spinner, the seconds so far and `what`, on stderr, where indicatif draws nothing unless it
/// is a terminal; hidden unless [`show_progress`] was called. The line is cleared when it is
/// dropped, on an error's early return too; clear it before the page is flushed, so the two
/// never mix.
pub fn working(what: &str) -> Working {
    Working(if SHOW_PROGRESS.load(Ordering::Relaxed) {
        crate::report::spinner(what)
    } else {
        ProgressBar::hidden()
    })
}

/// The progress line [`working`] draws; its message can change as the work goes on.
#[derive(Debug)]
pub struct Working(ProgressBar);

impl std::ops::Deref for Working {
    type Target = ProgressBar;

    fn deref(&self) -> &ProgressBar {
        &self.0
    }
}

impl Drop for Working {
    fn drop(&mut self) {
        self.0.finish_and_clear();
    }
}

/// Runs `work` under a [`working`] line that says `what`, and clears the line after it; `work`
/// may change the line's message as it goes.
pub fn with_progress<T>(what: &str, work: impl FnOnce(&ProgressBar) -> T) -> T {
    let line = working(what);
    work(&line)
}

/// What a walk-through says about where it runs: one device or several.
pub trait RunsOn {
    fn kind(&self) -> BackendKind;
    /// The first line every binary prints: which backend, which device(s).
    fn banner(&self) -> String;
}

impl RunsOn for Device {
    fn kind(&self) -> BackendKind {
        Device::kind(self)
    }

    fn banner(&self) -> String {
        Device::banner(self)
    }
}

impl RunsOn for Gpus {
    fn kind(&self) -> BackendKind {
        Gpus::kind(self)
    }

    fn banner(&self) -> String {
        Gpus::banner(self)
    }
}

/// Appends one line to the page being written.
pub fn say(page: &mut String, line: &str) {
    page.push_str(line);
    page.push('\n');
}

/// Writes the page so far to `out` and starts a new one, so long steps show progress.
pub fn flush(page: &mut String, out: &mut dyn Write) -> Result<()> {
    let stdout = Path::new("stdout");
    out.write_all(page.as_bytes())
        .map_err(|e| HarnessError::io("write", stdout, e))?;
    out.flush()
        .map_err(|e| HarnessError::io("write", stdout, e))?;
    page.clear();
    Ok(())
}

/// Prints a walk-through's opening: the backend and device first, so every result below is
/// read knowing where it ran, then the chapter's own lines about its inputs. Creates `images`
/// before any step runs, so a directory that cannot be made fails at once, not halfway through.
pub fn opening(
    page: &mut String,
    device: &impl RunsOn,
    about: &[&str],
    images: &Path,
    out: &mut dyn Write,
) -> Result<()> {
    say(page, &device.banner());
    for line in about {
        say(page, line);
    }
    flush(page, out)?;
    std::fs::create_dir_all(images).map_err(|e| HarnessError::io("create", images, e))
}

/// The variants a run walks through with their numbers in teaching order: all of them, or the
/// one `--variant` names, which keeps the number it has in the full walk-through.
pub fn selected<'a, K>(
    variants: &'a [Variant<K>],
    chosen: Option<&str>,
) -> Result<Vec<(usize, &'a Variant<K>)>> {
    let numbered = variants.iter().enumerate().map(|(index, v)| (index + 1, v));
    match chosen {
        Some(name) => {
            let wanted = find_variant(variants, name).map_err(HarnessError::Invalid)?;
            Ok(numbered.filter(|(_, v)| v.name == wanted.name).collect())
        }
        None => Ok(numbered.collect()),
    }
}

/// Opens a variant's section with the `## N. name` heading that [`sections`] splits the book's
/// snapshots at, and the kernel and expectation it is about.
pub fn heading<K>(page: &mut String, number: usize, variant: &Variant<K>) {
    say(page, "");
    say(
        page,
        &format!("## {number}. {} — {}", variant.name, variant.summary),
    );
    say(
        page,
        &format!(
            "{} · {} · expected: {}",
            variant.kernel.path, variant.kernel.entry, variant.expect
        ),
    );
}

/// The seed for one more run of a racy step under the adversarial schedule, which lets a warp
/// run ahead to its next barrier and so turns a hidden race into a wrong answer. Only on the
/// emulator, and only when the user kept the default schedule: one they chose is theirs to see.
pub fn adversarial_seed(device: &Device, seed: u64) -> Option<u64> {
    let settings = device.emu_settings()?;
    (settings.schedule == Schedule::Hardware).then_some(seed)
}

/// Why the emulator prints no timings, and what a GPU run shows instead: worded alike in every
/// chapter, so a reader learns once that the emulator models the order of warps, not time.
pub fn timing_skipped(gpu_shows: &str) -> String {
    format!(
        "skipped on the emulator: it models a schedule of warps, not time; run with --backend cuda on an NVIDIA GPU for {gpu_shows}"
    )
}

/// Launches a racy kernel `repeats` times and says how often it gave `want`, as
/// "`what` after N launches: 1, 1, 2 — ✗ 0 of N right": one run proves little either way.
/// Returns the first launch's checker findings, for [`checker_section`].
pub fn repeated_launches<T: PartialEq + std::fmt::Display>(
    page: &mut String,
    what: &str,
    want: &T,
    repeats: usize,
    mut launch: impl FnMut() -> Result<(T, Vec<Finding>)>,
) -> Result<Vec<Finding>> {
    let mut first_findings = None;
    let mut results = Vec::with_capacity(repeats);
    for _ in 0..repeats {
        let (result, findings) = launch()?;
        results.push(result);
        first_findings.get_or_insert(findings);
    }
    let listed: Vec<String> = results.iter().map(T::to_string).collect();
    let right = results.iter().filter(|r| *r == want).count();
    let mark = if right == repeats { "✓" } else { "✗" };
    say(
        page,
        &format!(
            "{what} after {repeats} launches: {} — {mark} {right} of {repeats} right",
            listed.join(", ")
        ),
    );
    Ok(first_findings.unwrap_or_default())
}

/// What the checkers said about one variant's launches, or why they did not run, and whether
/// the report names the kernel's `// BUG:` line.
pub fn checker_section<K>(
    device: &impl RunsOn,
    variant: &Variant<K>,
    findings: &[Finding],
    page: &mut String,
) {
    // Only these expectations promise a checker report at the `// BUG:` line; a wrong result
    // may come with findings elsewhere (a race on the output, say) that prove nothing about it.
    let checker_visible = matches!(
        variant.expect,
        Expect::Race | Expect::BarrierDivergence | Expect::OutOfBounds | Expect::Deadlock
    );
    if device.kind().is_cuda() {
        if checker_visible {
            say(
                page,
                "checkers: run with --backend emu to see the checkers name the line",
            );
        }
        return;
    }
    if findings.is_empty() {
        say(
            page,
            "checkers: racecheck, synccheck, memcheck and initcheck report nothing",
        );
        return;
    }
    let s = if findings.len() == 1 { "" } else { "s" };
    say(page, &format!("checkers: {} finding{s}", findings.len()));
    let quote = |file: &str, at: u32| crate::check::report::source_line(&variant.kernel, file, at);
    for finding in findings.iter().take(FINDINGS_SHOWN) {
        for line in finding.quoting(&quote).to_string().lines() {
            say(page, &format!("  {line}"));
        }
    }
    if findings.len() > FINDINGS_SHOWN {
        say(
            page,
            &format!("  … and {} more", findings.len() - FINDINGS_SHOWN),
        );
    }
    if let Some(location) = variant.bug_location().filter(|_| checker_visible) {
        let named = variant.expect.is_shown_by(findings, variant.bug_line());
        let verdict = if named { "named ✓" } else { "not named ✗" };
        say(page, &format!("the // BUG: line is {location}: {verdict}"));
    }
}

/// Splits a walk-through's output at its `## N. name` headings into named sections for
/// snapshots: `00_header`, `01_racy_increment`, …, and `gpu` for `## GPU timing`.
pub fn sections(printed: &str) -> Vec<(String, String)> {
    let mut sections = vec![("00_header".to_string(), String::new())];
    for line in printed.lines() {
        if let Some(heading) = line.strip_prefix("## ") {
            let first_word = |text: &str| text.split(' ').next().unwrap_or_default().to_string();
            let name = match heading.split_once(". ") {
                Some((number, rest)) => format!("{number:0>2}_{}", first_word(rest)),
                None => first_word(heading).to_lowercase(),
            };
            sections.push((name.replace('-', "_"), String::new()));
        }
        if let Some((_, text)) = sections.last_mut() {
            say(text, line);
        }
    }
    for (_, text) in &mut sections {
        *text = text.trim_end().to_string();
    }
    sections
}

/// `--list`: every variant of a chapter in teaching order.
pub fn variant_table<K>(variants: &[Variant<K>]) -> String {
    let rows = variants.iter().enumerate().map(|(index, v)| {
        vec![
            (index + 1).to_string(),
            v.name.to_string(),
            v.expect.to_string(),
            v.kernel.path.to_string(),
            v.summary.to_string(),
        ]
    });
    crate::report::table(&["#", "variant", "expect", "kernel", "what it shows"], rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repeated_launches_count_the_right_results_and_keep_the_first_findings() {
        let mut page = String::new();
        let mut runs = [3, 1, 3].into_iter();
        let findings = repeated_launches(&mut page, "x[0]", &3, 3, || {
            Ok((runs.next().unwrap_or(0), Vec::new()))
        })
        .expect("no launch fails");
        assert_eq!(
            page.trim_end(),
            "x[0] after 3 launches: 3, 1, 3 — ✗ 2 of 3 right"
        );
        assert!(findings.is_empty());
        let failing = repeated_launches(&mut String::new(), "x", &0, 2, || -> Result<(i32, _)> {
            Err(HarnessError::Invalid("launch refused".into()))
        });
        assert!(failing.is_err());
    }

    fn variant(expect: Expect) -> Variant {
        Variant {
            name: "v",
            kernel: crate::KernelSource {
                path: "kernels/c/01_v.cu",
                entry: "v",
                source: "// header\n\ny[i] = x; // BUG: here\n",
                committed_ptx: "",
                own: None,
            },
            expect,
            summary: "",
            kind: (),
        }
    }

    fn race_at(line: u32) -> Finding {
        use ptx_emu::{Access, AccessOp, Hazard, SourceLoc, Space, ThreadRef};
        let access = Access {
            op: AccessOp::Write,
            thread: ThreadRef {
                block: [0, 0, 0],
                thread: [0, 0, 0],
            },
            at: SourceLoc {
                file: "kernels/c/01_v.cu".into(),
                line,
                inlined_at: None,
                inlined_into: None,
                called_from: None,
                ptx_line: 1,
            },
        };
        Finding {
            kind: crate::FindingKind::Race {
                hazard: Hazard::WriteAfterWrite,
                space: Space::Global,
            },
            count: 1,
            location: None,
            accesses: vec![access.clone(), access],
            threads: Vec::new(),
            why: "unordered".into(),
        }
    }

    #[test]
    fn only_checker_expectations_get_a_verdict_on_the_bug_line() {
        let device = Device::open(crate::BackendChoice::Emu).unwrap();
        let mut page = String::new();
        checker_section(&device, &variant(Expect::Race), &[race_at(3)], &mut page);
        assert!(page.contains("kernels/c/01_v.cu:3: named ✓"), "{page}");
        page.clear();
        checker_section(&device, &variant(Expect::Race), &[race_at(4)], &mut page);
        assert!(page.contains("not named ✗"), "{page}");
        // a wrong result's incidental race at another line proves nothing about its BUG line
        page.clear();
        checker_section(
            &device,
            &variant(Expect::WrongResult),
            &[race_at(4)],
            &mut page,
        );
        assert!(page.contains("race (write-after-write)"), "{page}");
        assert!(!page.contains("BUG: line"), "{page}");
    }

    #[test]
    fn a_chosen_variant_keeps_its_teaching_number() {
        let variants = [
            variant(Expect::Race),
            Variant {
                name: "w",
                ..variant(Expect::Correct)
            },
        ];
        let all: Vec<usize> = selected(&variants, None)
            .unwrap()
            .iter()
            .map(|(number, _)| *number)
            .collect();
        assert_eq!(all, [1, 2]);
        let chosen = selected(&variants, Some("w")).unwrap();
        assert_eq!(chosen.len(), 1);
        assert_eq!((chosen[0].0, chosen[0].1.name), (2, "w"));
        let error = selected(&variants, Some("x")).unwrap_err().to_string();
        assert_eq!(error, "unknown variant `x`; this chapter has: v, w");

        let mut page = String::new();
        heading(&mut page, chosen[0].0, chosen[0].1);
        assert_eq!(
            page,
            "\n## 2. w — \nkernels/c/01_v.cu · v · expected: correct\n"
        );
    }

    #[test]
    fn the_adversarial_rerun_is_only_offered_on_the_default_schedule() {
        let mut device = Device::open(crate::BackendChoice::Emu).unwrap();
        assert_eq!(adversarial_seed(&device, 7), Some(7));
        let adversarial = Schedule::Adversarial { seed: 7 };
        let inside = device.with_schedule(adversarial, |device| {
            (
                adversarial_seed(device, 7),
                device.emu_settings().map(|s| s.schedule),
            )
        });
        assert_eq!(inside, (None, Some(adversarial)));
        assert_eq!(
            device.emu_settings().map(|s| s.schedule),
            Some(Schedule::Hardware),
            "the schedule is restored"
        );
    }

    #[test]
    fn sections_split_at_numbered_headings() {
        let printed =
            "backend: emu\n\n## 1. racy-increment — lost\nx = 1\n\n## GPU timing\nskipped\n";
        let sections = sections(printed);
        let names: Vec<&str> = sections.iter().map(|(name, _)| name.as_str()).collect();
        assert_eq!(names, ["00_header", "01_racy_increment", "gpu"]);
        assert_eq!(sections[1].1, "## 1. racy-increment — lost\nx = 1");
        assert_eq!(sections[0].1, "backend: emu");
    }
}
