//! Which exercises pass and how many hints each has shown: `exercises/.progress.json`,
//! git-ignored, the learner's own.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Progress {
    /// Exercises whose last check passed.
    #[serde(default)]
    pub done: BTreeSet<String>,
    /// Hints shown so far, per exercise.
    #[serde(default)]
    pub hints: BTreeMap<String, usize>,
    /// What the hints shown so far were about, per exercise (the failure's reason and lines):
    /// a file that fails another way starts its hints again.
    #[serde(default)]
    pub hinted: BTreeMap<String, String>,
}

impl Progress {
    /// The progress at `path`; none yet is a fresh start.
    pub fn load(path: &Path) -> anyhow::Result<Self> {
        match std::fs::read_to_string(path) {
            Ok(text) => serde_json::from_str(&text).map_err(|error| {
                anyhow::anyhow!(
                    "{} is not a progress file Racetrack can read ({error}); delete it to start afresh",
                    path.display()
                )
            }),
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(Self::default()),
            Err(error) => Err(anyhow::anyhow!("cannot read {}: {error}", path.display())),
        }
    }

    /// Writes the progress to a file beside `path`, then renames it over `path`: another
    /// `cargo learn` reading it at that moment (watch mode in one terminal, `check` in another)
    /// sees the old file or the new one, never half of one.
    pub fn save(&self, path: &Path) -> anyhow::Result<()> {
        let text = serde_json::to_string_pretty(self)?;
        let mut temporary = path.as_os_str().to_owned();
        temporary.push(format!(".{}.tmp", std::process::id()));
        let temporary = std::path::PathBuf::from(temporary);
        std::fs::write(&temporary, text + "\n")
            .and_then(|()| std::fs::rename(&temporary, path))
            .map_err(|error| {
                let _ = std::fs::remove_file(&temporary);
                anyhow::anyhow!("cannot write {}: {error}", path.display())
            })
    }

    pub fn is_done(&self, name: &str) -> bool {
        self.done.contains(name)
    }

    pub fn record(&mut self, name: &str, passed: bool) {
        if passed {
            self.done.insert(name.to_string());
        } else {
            self.done.remove(name);
        }
    }

    /// Shows one more hint of `name`'s `count` about `subject`; returns which (1-based),
    /// staying at the last, and starting at 1 again when the subject changed.
    pub fn next_hint_about(&mut self, name: &str, subject: &str, count: usize) -> usize {
        if self.hinted.get(name).map(String::as_str) != Some(subject) {
            self.hinted.insert(name.to_string(), subject.to_string());
            self.hints.remove(name);
        }
        self.next_hint(name, count)
    }

    /// Shows one more hint of `name`'s `count`; returns which (1-based), or `count + 1` once
    /// every hint was shown: then they are all shown again, together.
    pub fn next_hint(&mut self, name: &str, count: usize) -> usize {
        let shown = self.hints.entry(name.to_string()).or_insert(0);
        *shown = (*shown + 1).min(count.max(1) + 1);
        *shown
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hints_start_again_when_the_failure_changes() {
        let mut progress = Progress::default();
        assert_eq!(progress.next_hint_about("a", "race at 9", 3), 1);
        assert_eq!(progress.next_hint_about("a", "race at 9", 3), 2);
        assert_eq!(
            progress.next_hint_about("a", "barrier divergence at 11", 3),
            1
        );
        assert_eq!(
            progress.next_hint_about("a", "barrier divergence at 11", 3),
            2
        );
        assert_eq!(progress.next_hint_about("b", "race at 9", 3), 1);
    }

    #[test]
    fn hints_advance_and_stop_at_the_last() {
        let mut progress = Progress::default();
        assert_eq!(progress.next_hint("a", 3), 1);
        assert_eq!(progress.next_hint("a", 3), 2);
        assert_eq!(progress.next_hint("a", 3), 3);
        // past the last: all of them, again and again
        assert_eq!(progress.next_hint("a", 3), 4);
        assert_eq!(progress.next_hint("a", 3), 4);
        assert_eq!(progress.next_hint("b", 2), 1);
        progress.record("a", true);
        assert!(progress.is_done("a"));
        progress.record("a", false);
        assert!(!progress.is_done("a"));
    }

    #[test]
    fn progress_round_trips_and_a_missing_file_is_a_fresh_start() {
        let dir = std::env::temp_dir().join(format!("learn-progress-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("progress.json");
        assert_eq!(Progress::load(&path).unwrap(), Progress::default());
        let mut progress = Progress::default();
        progress.record("x", true);
        progress.next_hint("y", 2);
        progress.save(&path).unwrap();
        assert_eq!(Progress::load(&path).unwrap(), progress);
        let files: Vec<_> = std::fs::read_dir(&dir).unwrap().flatten().collect();
        assert_eq!(
            files.len(),
            1,
            "the file written beside it is renamed, not left: {files:?}"
        );
        std::fs::write(&path, "not json").unwrap();
        let error = Progress::load(&path).unwrap_err().to_string();
        assert!(error.contains("delete it to start afresh"), "{error}");
        std::fs::remove_dir_all(&dir).ok();
    }
}
