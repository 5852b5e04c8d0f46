//! `python3`'s site-packages folders, where pip puts NVRTC and CUDA's headers: asked of
//! `python3` once per environment and remembered in Racetrack's cache.
//!
//! Asking costs a process: 20–40 ms for a plain `python3`, and over 100 ms behind a version
//! manager's shim (pyenv runs a chain of shell scripts first). Every run that compiles asks, so
//! the answer is kept beside the cache's other pieces, under a fingerprint of everything that
//! decides it: which `python3` the `PATH` finds (its path, its target, its size and time), the
//! environment that steers Python and the version managers (`PATH`, `HOME`, `PYTHON*`, `PYENV*`,
//! `VIRTUAL_ENV`, `CONDA*`, `ASDF*`, `MISE*`), and the version files that pyenv, asdf and mise
//! read (in the working directory and above it, pyenv's global one, the home folder's). When any
//! of them changes, appears or goes, `python3` is asked again. Deleting the file (or the whole
//! cache folder) is always safe.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::SystemTime;

/// The remembered answer's file, under [`crate::provision::cache_root`].
pub const MEMO_FILE: &str = "python-site-packages";

/// Environment variables whose names start with one of these change which Python runs or
/// where its site-packages are.
const ENV_PREFIXES: &[&str] = &["PYTHON", "PYENV", "VIRTUAL_ENV", "CONDA", "ASDF", "MISE"];

/// Files that version managers read to pick a Python, in the working directory and above.
const VERSION_FILES: &[&str] = &[
    ".python-version",
    ".tool-versions",
    ".mise.toml",
    "mise.toml",
];

/// The site-packages folders (and the user's site folder) of the `python3` on `PATH`:
/// remembered when the fingerprint matches, else asked and remembered. Empty when there is no
/// `python3`.
pub fn site_dirs() -> Vec<PathBuf> {
    let memo = crate::provision::cache_root().map(|root| root.join(MEMO_FILE));
    let print = fingerprint();
    if let Some(memo) = &memo
        && let Some(dirs) = recall(memo, &print)
    {
        return dirs;
    }
    let Some(dirs) = ask() else {
        return Vec::new();
    };
    if let Some(memo) = &memo {
        // A cache that cannot be written only means asking again next time.
        let _ = remember(memo, &print, &dirs);
    }
    dirs
}

/// What `python3` says, or `None` when it cannot be run or fails.
pub fn ask() -> Option<Vec<PathBuf>> {
    let script = "import site, sys; print('\\n'.join(site.getsitepackages() + [site.getusersitepackages()]))";
    let output = Command::new("python3")
        .args(["-c", script])
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .ok()?;
    if !output.status.success() {
        return None;
    }
    Some(
        String::from_utf8_lossy(&output.stdout)
            .lines()
            .filter(|line| !line.is_empty())
            .map(PathBuf::from)
            .collect(),
    )
}

/// A file's identity as the fingerprint sees it: its size and modification time, or that it
/// is not there.
fn identity(path: &Path) -> String {
    match std::fs::metadata(path) {
        Ok(metadata) => {
            let modified = metadata
                .modified()
                .ok()
                .and_then(|time| time.duration_since(SystemTime::UNIX_EPOCH).ok())
                .unwrap_or_default();
            format!("{} {}", metadata.len(), modified.as_nanos())
        }
        Err(_) => "absent".to_string(),
    }
}

/// Everything the answer depends on, hashed.
pub fn fingerprint() -> String {
    let mut text = String::from("python3 site-packages 1\n");
    let mut vars: Vec<(String, String)> = std::env::vars_os()
        .filter_map(|(name, value)| {
            let name = name.to_str()?.to_string();
            let wanted = name == "PATH"
                || name == "HOME"
                || ENV_PREFIXES.iter().any(|prefix| name.starts_with(prefix));
            wanted.then(|| (name, value.to_string_lossy().into_owned()))
        })
        .collect();
    vars.sort();
    for (name, value) in vars {
        text.push_str(&format!("env {name}={value}\n"));
    }
    let python = std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|dir| dir.join("python3"))
            .find(|candidate| is_executable(candidate))
    });
    match &python {
        Some(python) => {
            let target = python.canonicalize().unwrap_or_else(|_| python.clone());
            text.push_str(&format!(
                "python3 {} -> {} {}\n",
                python.display(),
                target.display(),
                identity(&target)
            ));
        }
        None => text.push_str("python3 absent\n"),
    }
    // Only the version files that are there: the working directory matters to a version
    // manager through them alone, so runs from folders that have none share one answer.
    let cwd = std::env::current_dir().unwrap_or_default();
    for dir in cwd.ancestors() {
        for file in VERSION_FILES {
            let path = dir.join(file);
            if path.exists() {
                text.push_str(&format!("{} {}\n", path.display(), identity(&path)));
            }
        }
    }
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let pyenv_root = std::env::var_os("PYENV_ROOT")
        .map(PathBuf::from)
        .or_else(|| home.as_ref().map(|home| home.join(".pyenv")));
    let global_files =
        pyenv_root
            .iter()
            .map(|root| root.join("version"))
            .chain(home.iter().flat_map(|home| {
                [
                    home.join(".tool-versions"),
                    home.join(".config/mise/config.toml"),
                ]
            }));
    for path in global_files {
        text.push_str(&format!("{} {}\n", path.display(), identity(&path)));
    }
    blake3::hash(text.as_bytes()).to_hex().to_string()
}

#[cfg(unix)]
fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path)
        .is_ok_and(|metadata| metadata.is_file() && metadata.permissions().mode() & 0o111 != 0)
}

#[cfg(not(unix))]
fn is_executable(path: &Path) -> bool {
    path.is_file()
}

/// The remembered folders, when `memo` was written under `print`.
pub fn recall(memo: &Path, print: &str) -> Option<Vec<PathBuf>> {
    let text = std::fs::read_to_string(memo).ok()?;
    let mut lines = text.lines();
    if lines.next()? != print {
        return None;
    }
    // The last line marks a whole file: a torn write is asked again.
    let mut dirs: Vec<&str> = lines.collect();
    if dirs.pop()? != "end" {
        return None;
    }
    Some(dirs.into_iter().map(PathBuf::from).collect())
}

/// Writes the answer beside `memo` and renames it into place, so readers see all or nothing.
pub fn remember(memo: &Path, print: &str, dirs: &[PathBuf]) -> std::io::Result<()> {
    let Some(folder) = memo.parent() else {
        return Ok(());
    };
    std::fs::create_dir_all(folder)?;
    let mut text = format!("{print}\n");
    for dir in dirs {
        let Some(dir) = dir.to_str().filter(|dir| !dir.contains('\n')) else {
            // A folder this file cannot hold: ask again next time rather than lose it.
            return Ok(());
        };
        text.push_str(dir);
        text.push('\n');
    }
    text.push_str("end\n");
    let staging = folder.join(format!(".{MEMO_FILE}-{}", std::process::id()));
    let written =
        std::fs::File::create(&staging).and_then(|mut file| file.write_all(text.as_bytes()));
    if let Err(error) = written {
        let _ = std::fs::remove_file(&staging);
        return Err(error);
    }
    std::fs::rename(&staging, memo).inspect_err(|_| {
        let _ = std::fs::remove_file(&staging);
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_remembered_answer_is_used_only_under_its_fingerprint_and_whole() {
        let dir =
            std::env::temp_dir().join(format!("racetrack-python-sites-{}", std::process::id()));
        let memo = dir.join(MEMO_FILE);
        let dirs = vec![
            PathBuf::from("/usr/lib/python3/dist-packages"),
            PathBuf::from("/home/me/.local/lib/python3.11/site-packages"),
        ];
        assert_eq!(recall(&memo, "print"), None, "nothing remembered yet");
        remember(&memo, "print", &dirs).unwrap_or_else(|error| panic!("{error}"));
        assert_eq!(recall(&memo, "print"), Some(dirs.clone()));
        assert_eq!(recall(&memo, "another"), None, "another environment asks");
        let text = std::fs::read_to_string(&memo).unwrap_or_default();
        std::fs::write(&memo, &text[..text.len() - 4]).unwrap_or_default();
        assert_eq!(recall(&memo, "print"), None, "a torn file asks again");
        remember(&memo, "print", &[]).unwrap_or_else(|error| panic!("{error}"));
        assert_eq!(recall(&memo, "print"), Some(Vec::new()));
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn the_fingerprint_is_stable() {
        assert_eq!(fingerprint(), fingerprint());
    }
}
