//! Pieces every chapter's walk-through prints the same way.

use std::io::Write;
use std::path::Path;

use crate::device::{Device, Finding};
use crate::error::{HarnessError, Result};
use crate::variant::{Expect, Variant};

/// How many findings a walk-through prints in full before summarising the rest.
pub const FINDINGS_SHOWN: usize = 2;

/// Appends one line to the page being written.
pub fn say(page: &mut String, line: &str) {
    page.push_str(line);
    page.push('\n');
}

/// Writes the page so far to `out` and starts a new one, so long steps show progress.
pub fn flush(page: &mut String, out: &mut dyn Write) -> Result<()> {
    let stdout = Path::new("stdout");
    out.write_all(page.as_bytes())
        .map_err(|e| HarnessError::io(stdout, e))?;
    out.flush().map_err(|e| HarnessError::io(stdout, e))?;
    page.clear();
    Ok(())
}

/// What the checkers said about one variant's launches, or why they did not run, and whether
/// the report names the kernel's `// BUG:` line.
pub fn checker_section<K>(
    device: &Device,
    variant: &Variant<K>,
    findings: &[Finding],
    page: &mut String,
) {
    if device.kind().is_cuda() {
        let checker_visible = matches!(
            variant.expect,
            Expect::Race | Expect::BarrierDivergence | Expect::OutOfBounds | Expect::Deadlock
        );
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
            "checkers: racecheck, synccheck and memcheck report nothing",
        );
        return;
    }
    say(page, &format!("checkers: {} finding(s)", findings.len()));
    for finding in findings.iter().take(FINDINGS_SHOWN) {
        for line in finding.to_string().lines() {
            say(page, &format!("  {line}"));
        }
    }
    if findings.len() > FINDINGS_SHOWN {
        say(
            page,
            &format!("  … and {} more", findings.len() - FINDINGS_SHOWN),
        );
    }
    if let Some(location) = variant.bug_location() {
        let named = variant.expect.is_shown_by(findings, variant.bug_line());
        let verdict = if named { "named ✓" } else { "not named ✗" };
        say(page, &format!("the // BUG: line is {location}: {verdict}"));
    }
}
