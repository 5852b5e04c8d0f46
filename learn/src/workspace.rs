//! The learner's files: `exercises/<chapter>/NN_name.cu` and the progress file, under a root
//! (the repository, or a directory of a test's own).

use std::path::{Path, PathBuf};

use anyhow::Context;

use crate::exercise::Exercise;
use crate::progress::Progress;

#[derive(Debug, Clone)]
pub struct Workspace {
    root: PathBuf,
}

impl Workspace {
    pub fn new(root: impl Into<PathBuf>) -> Self {
        Self { root: root.into() }
    }

    /// The repository this binary was built from.
    pub fn repository() -> Self {
        Self::new(Path::new(env!("CARGO_MANIFEST_DIR")).join(".."))
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    pub fn file(&self, exercise: &Exercise) -> PathBuf {
        self.root.join(exercise.path())
    }

    pub fn progress_path(&self) -> PathBuf {
        self.root.join("exercises/.progress.json")
    }

    pub fn progress(&self) -> anyhow::Result<Progress> {
        Progress::load(&self.progress_path())
    }

    pub fn save_progress(&self, progress: &Progress) -> anyhow::Result<()> {
        progress.save(&self.progress_path())
    }

    /// Reads the progress file, applies `change`, and writes it back: what another `cargo
    /// learn` running beside this one recorded meanwhile is kept, not overwritten by a copy
    /// this one read earlier. Returns the progress as written and what `change` returned.
    pub fn update_progress<T>(
        &self,
        change: impl FnOnce(&mut Progress) -> T,
    ) -> anyhow::Result<(Progress, T)> {
        let mut progress = self.progress()?;
        let result = change(&mut progress);
        self.save_progress(&progress)?;
        Ok((progress, result))
    }

    /// Writes the starting file of every exercise that has none yet; returns how many.
    pub fn ensure_files(&self, track: &[Exercise]) -> anyhow::Result<usize> {
        let mut written = 0;
        for exercise in track {
            let path = self.file(exercise);
            if !path.exists() {
                self.write_start(exercise)?;
                written += 1;
            }
        }
        Ok(written)
    }

    /// Puts `exercise`'s file back to its starting text.
    pub fn write_start(&self, exercise: &Exercise) -> anyhow::Result<()> {
        let path = self.file(exercise);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)
                .with_context(|| format!("cannot create {}", parent.display()))?;
        }
        std::fs::write(&path, exercise.starting_text())
            .with_context(|| format!("cannot write {}", path.display()))
    }

    /// Copies the learner's file to `FILE.bak` when it differs from the starting text; returns
    /// the copy's path as the learner would type it, or `None` when there was nothing to keep.
    pub fn keep_changed(&self, exercise: &Exercise) -> anyhow::Result<Option<String>> {
        let path = self.file(exercise);
        let Ok(now) = std::fs::read_to_string(&path) else {
            return Ok(None);
        };
        if now == exercise.starting_text() {
            return Ok(None);
        }
        let kept = path.with_extension("cu.bak");
        std::fs::write(&kept, now).with_context(|| format!("cannot write {}", kept.display()))?;
        Ok(Some(format!("{}.bak", exercise.path())))
    }

    /// The learner's file as it is now.
    pub fn read(&self, exercise: &Exercise) -> anyhow::Result<String> {
        let path = self.file(exercise);
        std::fs::read_to_string(&path).map_err(|error| {
            anyhow::anyhow!(
                "cannot read {} ({error}); `cargo learn reset {}` writes it again",
                exercise.path(),
                exercise.name
            )
        })
    }
}
