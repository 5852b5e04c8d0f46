//! Fetching the pinned CUDA pieces Racetrack compiles with (NVRTC, CUDA's headers, nvcc) into
//! its per-user cache when they are nowhere else, so that a fresh machine needs only Rust and
//! python3 (and a C++ compiler for nvcc's host code).
//!
//! pip does the fetching (`python3 -m pip install --target …`): it knows the user's index, proxy
//! and mirror settings, which Racetrack must not guess. Each piece is installed into a folder of
//! its own beside the final one and renamed into place once it loads, under a lock, so that
//! concurrent first runs (a test binary's threads, `cargo test`'s processes) fetch it once and
//! nothing ever uses a half-finished install.

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::nvrtc::{
    PINNED_CCCL, PINNED_CRT, PINNED_NVCC, PINNED_NVRTC, PINNED_NVTX, PINNED_NVVM,
    PINNED_PROFILER_API, PINNED_RUNTIME, PINNED_VERSION,
};

/// Set to 1 to never touch the network: a missing piece is an error naming the command to run.
pub const OFFLINE_ENV: &str = "RACETRACK_OFFLINE";

/// What Racetrack can fetch for itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Piece {
    /// `libnvrtc.so.13` and its builtins: every kernel is compiled by it.
    Nvrtc,
    /// CUDA's headers (`cuda_fp16.h`, `cooperative_groups.h`) and CCCL's (libcu++, CUB), for
    /// `racetrack check` on files that include them.
    Headers,
    /// nvcc with everything it runs and includes, for `racetrack run`'s whole programs.
    Nvcc,
}

impl Piece {
    /// The wheels, pinned to the release `kernels/ptx/` is generated with.
    pub fn wheels(self) -> &'static [&'static str] {
        match self {
            Self::Nvrtc => &[PINNED_NVRTC],
            Self::Headers => &[PINNED_RUNTIME, PINNED_CCCL],
            Self::Nvcc => &[
                PINNED_NVCC,
                PINNED_NVVM,
                PINNED_CRT,
                PINNED_RUNTIME,
                PINNED_CCCL,
                PINNED_PROFILER_API,
                PINNED_NVTX,
            ],
        }
    }

    /// What it is, for the sentences that name it.
    pub fn what(self) -> &'static str {
        match self {
            Self::Nvrtc => "NVRTC",
            Self::Headers => "CUDA's headers",
            Self::Nvcc => "nvcc",
        }
    }

    fn why(self) -> &'static str {
        match self {
            Self::Nvrtc => "the CUDA compiler every kernel goes through",
            Self::Headers => "the file includes a header that comes with them",
            Self::Nvcc => "the CUDA compiler `racetrack run` builds whole programs with",
        }
    }

    /// How much comes down and what it takes on disk, measured on the pinned wheels, so the
    /// line that starts a fetch says how long a wait to expect.
    pub fn size(self) -> &'static str {
        match self {
            Self::Nvrtc => "a 90 MB download, 218 MB on disk",
            Self::Headers => "a 5 MB download, 26 MB on disk",
            Self::Nvcc => "about 270 MB on disk",
        }
    }

    /// The cache folder's name: the pins themselves, so a new pin never reuses an old install.
    pub fn folder_name(self) -> String {
        let versions: Vec<&str> = self
            .wheels()
            .iter()
            .filter_map(|wheel| wheel.split_once("==").map(|(_, version)| version))
            .collect();
        let stem = match self {
            Self::Nvrtc => "nvrtc",
            Self::Headers => "headers",
            Self::Nvcc => "nvcc",
        };
        format!("{stem}-{}", versions.join("-"))
    }

    /// The command that installs it by hand where Racetrack looks (Python's site-packages).
    pub fn manual_command(self) -> String {
        format!("python3 -m pip install {}", self.wheels().join(" "))
    }

    /// Whether `root` (a pip `--target` folder) holds a complete install.
    fn is_complete(self, root: &Path) -> Result<(), String> {
        let cu13 = root.join("nvidia/cu13");
        match self {
            Self::Nvrtc => nvrtc_version_at(&cu13.join("lib")).and_then(|version| {
                if version == PINNED_VERSION {
                    Ok(())
                } else {
                    Err(format!(
                        "it reports version {}.{}, not {}.{}",
                        version.0, version.1, PINNED_VERSION.0, PINNED_VERSION.1
                    ))
                }
            }),
            Self::Headers => {
                let include = cu13.join("include");
                let missing: Vec<String> =
                    ["cuda_fp16.h", "cooperative_groups.h", "cccl/nv/target"]
                        .iter()
                        .filter(|file| !include.join(file).is_file())
                        .map(ToString::to_string)
                        .collect();
                if missing.is_empty() {
                    Ok(())
                } else {
                    Err(format!("it lacks {}", missing.join(", ")))
                }
            }
            Self::Nvcc => {
                let version = crate::nvcc::probe(&cu13.join("bin/nvcc"))
                    .map_err(|problem| format!("its nvcc {problem}"))?;
                if version.full != PINNED_NVCC_VERSION {
                    return Err(format!(
                        "its nvcc is {}, not {PINNED_NVCC_VERSION}",
                        version.full
                    ));
                }
                let missing: Vec<&str> = [
                    "lib64/libcudart.so",
                    "lib/libcudart.so.13",
                    "include/cuda_runtime.h",
                    "include/crt/host_defines.h",
                    "nvvm/bin/cicc",
                ]
                .into_iter()
                .filter(|file| !cu13.join(file).is_file())
                .collect();
                if missing.is_empty() {
                    Ok(())
                } else {
                    Err(format!("it lacks {}", missing.join(", ")))
                }
            }
        }
    }

    /// What pip's install lacks to be used as it is: nvcc's profile links from `lib64/`, the
    /// wheels ship `lib/`, and `-cudart shared` asks the linker for `libcudart.so`, of which
    /// the runtime's wheel ships only the versioned file. Relative links, so the folder can be
    /// renamed into place.
    fn finish_install(self, root: &Path) -> Result<(), String> {
        if self != Self::Nvcc {
            return Ok(());
        }
        let cu13 = root.join("nvidia/cu13");
        for (link, target) in [
            (cu13.join("lib64"), "lib"),
            (cu13.join("lib/libcudart.so"), "libcudart.so.13"),
        ] {
            if std::fs::symlink_metadata(&link).is_ok() {
                continue;
            }
            symlink(target, &link)
                .map_err(|error| format!("cannot link {} to {target} ({error})", link.display()))?;
        }
        Ok(())
    }
}

/// The nvcc version [`Piece::Nvcc`] installs, as `nvcc --version` prints it after `V`.
pub const PINNED_NVCC_VERSION: &str = "13.0.88";

#[cfg(unix)]
fn symlink(target: &str, link: &Path) -> std::io::Result<()> {
    std::os::unix::fs::symlink(target, link)
}

#[cfg(not(unix))]
fn symlink(_target: &str, link: &Path) -> std::io::Result<()> {
    Err(std::io::Error::new(
        std::io::ErrorKind::Unsupported,
        format!(
            "{} needs a symbolic link, which only Unix has here",
            link.display()
        ),
    ))
}

/// Why a piece could not be provided; each is one sentence with the command to run by hand.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProvisionError {
    #[error(
        "{what} was not found in {searched}, and {OFFLINE_ENV} is set, so Racetrack did not fetch it; run `{command}`"
    )]
    Offline {
        what: &'static str,
        searched: String,
        command: String,
    },
    #[error(
        "{what} was not found in {searched}, and Racetrack has no cache folder to fetch it into (neither XDG_CACHE_HOME nor HOME is set); run `{command}`"
    )]
    NoCache {
        what: &'static str,
        searched: String,
        command: String,
    },
    #[error(
        "{what} was not found in {searched}, and Racetrack cannot fetch it: {problem}; install python3 with pip and run again, or run `{command}` where they are"
    )]
    NoPip {
        what: &'static str,
        searched: String,
        problem: String,
        command: String,
    },
    #[error(
        "{what} was not found in {searched}, and pip could not fetch it ({pip_said}); run `{command}` to see why, or set CUDA_PATH to a CUDA {major}.{minor} toolkit",
        major = PINNED_VERSION.0, minor = PINNED_VERSION.1
    )]
    PipFailed {
        what: &'static str,
        searched: String,
        pip_said: String,
        command: String,
    },
    #[error(
        "pip installed {wheels} into {folder}, but it cannot be used: {problem}; remove that folder and run again"
    )]
    Unusable {
        wheels: String,
        folder: PathBuf,
        problem: String,
    },
    #[error("cannot {action} {path}: {message}")]
    Io {
        action: &'static str,
        path: PathBuf,
        message: String,
    },
}

impl ProvisionError {
    fn io(action: &'static str, path: &Path, error: &std::io::Error) -> Self {
        Self::Io {
            action,
            path: path.to_path_buf(),
            message: error.to_string(),
        }
    }
}

/// Racetrack's per-user cache: `$XDG_CACHE_HOME/racetrack`, else `~/.cache/racetrack`.
pub fn cache_root() -> Option<PathBuf> {
    let xdg = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .filter(|dir| dir.is_absolute());
    let base = xdg.or_else(|| {
        std::env::var_os("HOME")
            .map(PathBuf::from)
            .filter(|home| home.is_absolute())
            .map(|home| home.join(".cache"))
    })?;
    Some(base.join("racetrack"))
}

/// The folder a piece is (or would be) installed in.
pub fn piece_root(piece: Piece) -> Option<PathBuf> {
    cache_root().map(|root| root.join(piece.folder_name()))
}

/// The installed piece's root, when a complete install is in the cache. A folder under its
/// final name is always complete: installs are renamed into place only once verified.
pub fn installed(piece: Piece) -> Option<PathBuf> {
    piece_root(piece).filter(|root| root.is_dir())
}

/// Library folders in the cache, for [`crate::nvrtc::library_dirs`]. nvcc's holds the same
/// runtime and CCCL wheels as the headers' piece, so once `racetrack run` fetched it, `check`
/// finds CUDA's headers beside it rather than fetching them again.
pub fn library_dirs() -> Vec<PathBuf> {
    [Piece::Nvrtc, Piece::Headers, Piece::Nvcc]
        .into_iter()
        .filter_map(piece_root)
        .map(|root| root.join("nvidia/cu13/lib"))
        .collect()
}

fn offline() -> bool {
    std::env::var_os(OFFLINE_ENV).is_some_and(|value| !value.is_empty() && value != "0")
}

/// Installs `piece` into the cache unless it is there already, and returns its root folder.
/// `searched` names the places already looked in, for the error sentences.
pub fn fetch(piece: Piece, searched: &str) -> Result<PathBuf, ProvisionError> {
    let command = piece.manual_command();
    if let Some(root) = installed(piece) {
        return Ok(root);
    }
    if offline() {
        return Err(ProvisionError::Offline {
            what: piece.what(),
            searched: searched.to_string(),
            command,
        });
    }
    let Some(cache) = cache_root() else {
        return Err(ProvisionError::NoCache {
            what: piece.what(),
            searched: searched.to_string(),
            command,
        });
    };
    require_pip(piece, searched)?;
    std::fs::create_dir_all(&cache)
        .map_err(|error| ProvisionError::io("create", &cache, &error))?;
    let _lock = CacheLock::take(&cache, piece)?;
    // Another process may have finished while this one waited for the lock.
    let root = cache.join(piece.folder_name());
    if root.is_dir() {
        return Ok(root);
    }
    install(piece, &cache, &root, searched)?;
    Ok(root)
}

fn install(piece: Piece, cache: &Path, root: &Path, searched: &str) -> Result<(), ProvisionError> {
    let wheels = piece.wheels().join(" ");
    let staging_prefix = format!(".fetching-{}-", piece.folder_name());
    // Under the lock, any staging folder is left over from an install that was killed.
    if let Ok(entries) = std::fs::read_dir(cache) {
        for entry in entries.flatten() {
            if entry
                .file_name()
                .to_string_lossy()
                .starts_with(&staging_prefix)
            {
                let _ = std::fs::remove_dir_all(entry.path());
            }
        }
    }
    let staging = cache.join(format!("{staging_prefix}{}", std::process::id()));
    let display_root = display_path(root);
    eprintln!(
        "racetrack: fetching {} ({wheels}; {}) into {display_root}, once per machine: {}",
        piece.what(),
        piece.size(),
        piece.why()
    );
    let started = Instant::now();
    run_pip(piece, &staging, searched)?;
    if let Err(problem) = piece
        .finish_install(&staging)
        .and_then(|()| piece.is_complete(&staging))
    {
        let _ = std::fs::remove_dir_all(&staging);
        return Err(ProvisionError::Unusable {
            wheels,
            folder: staging,
            problem,
        });
    }
    std::fs::rename(&staging, root)
        .map_err(|error| ProvisionError::io("rename", &staging, &error))?;
    eprintln!(
        "racetrack: {} {} ready in {display_root} ({:.0} s)",
        piece.what(),
        if piece == Piece::Headers { "are" } else { "is" },
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

/// `~/.cache/racetrack/…` rather than the home folder's full path, in what users read.
pub fn display_path(path: &Path) -> String {
    if let Some(home) = std::env::var_os("HOME").map(PathBuf::from)
        && let Ok(rest) = path.strip_prefix(&home)
    {
        return format!("~/{}", rest.display());
    }
    path.display().to_string()
}

fn no_pip(piece: Piece, searched: &str, problem: String) -> ProvisionError {
    ProvisionError::NoPip {
        what: piece.what(),
        searched: searched.to_string(),
        problem,
        command: piece.manual_command(),
    }
}

/// What `python3 -m pip --version` says (`pip 23.2.1 from … (python 3.11)`), or why pip
/// cannot be run: what fetching needs, and what `racetrack doctor` reports.
pub fn pip_version() -> Result<String, String> {
    match Command::new("python3")
        .args(["-m", "pip", "--version"])
        .stdin(Stdio::null())
        .output()
    {
        Err(error) => Err(format!("python3 could not be started ({error})")),
        Ok(output) if !output.status.success() => {
            Err("python3 has no pip (`python3 -m pip` failed)".to_string())
        }
        Ok(output) => Ok(String::from_utf8_lossy(&output.stdout).trim().to_string()),
    }
}

/// Fails unless `python3 -m pip` runs, before anything is announced or locked.
fn require_pip(piece: Piece, searched: &str) -> Result<(), ProvisionError> {
    pip_version()
        .map(|_| ())
        .map_err(|problem| no_pip(piece, searched, problem))
}

/// Runs pip with its output shown as a spinner's message (on a terminal) and kept for the error.
fn run_pip(piece: Piece, staging: &Path, searched: &str) -> Result<(), ProvisionError> {
    let mut command = Command::new("python3");
    command
        .args([
            "-m",
            "pip",
            "install",
            "--no-input",
            "--disable-pip-version-check",
        ])
        .args([
            "--progress-bar",
            "off",
            "--no-warn-script-location",
            "--target",
        ])
        .arg(staging)
        .args(piece.wheels())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = command.spawn().map_err(|error| {
        no_pip(
            piece,
            searched,
            format!("python3 could not be started ({error})"),
        )
    })?;
    let spinner = crate::report::spinner(&format!("pip install {}", piece.wheels().join(" ")));
    let stderr = child.stderr.take();
    let errors = std::thread::spawn(move || {
        let mut text = String::new();
        if let Some(mut stderr) = stderr {
            let _ = stderr.read_to_string(&mut text);
        }
        text
    });
    let mut said = Vec::new();
    if let Some(stdout) = child.stdout.take() {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            let line = line.trim().to_string();
            if !line.is_empty() {
                spinner.set_message(line.clone());
                said.push(line);
            }
        }
    }
    let status = child.wait();
    spinner.finish_and_clear();
    let errors = errors.join().unwrap_or_default();
    if status.as_ref().is_ok_and(std::process::ExitStatus::success) {
        return Ok(());
    }
    let _ = std::fs::remove_dir_all(staging);
    // pip's last error line says what went wrong (no network, no such version, a proxy).
    let last = |text: &str, wanted: &dyn Fn(&str) -> bool| {
        text.lines()
            .map(str::trim)
            .rfind(|line| wanted(line))
            .map(str::to_string)
    };
    let pip_said = last(&errors, &|line| line.starts_with("ERROR"))
        .or_else(|| last(&errors, &|line| !line.is_empty()))
        .or_else(|| said.last().cloned())
        .unwrap_or_else(|| "it exited with no message".to_string());
    Err(ProvisionError::PipFailed {
        what: piece.what(),
        searched: searched.to_string(),
        pip_said,
        command: piece.manual_command(),
    })
}

/// `nvrtcVersion` of the `libnvrtc.so.13` in `dir`, loaded by its path and closed again.
fn nvrtc_version_at(dir: &Path) -> Result<(i32, i32), String> {
    let path = dir.join("libnvrtc.so.13");
    if !path.is_file() {
        return Err(format!("{} is missing", path.display()));
    }
    // SAFETY: NVRTC's library has no initialisers with preconditions; nvrtcVersion writes two
    // ints through the pointers it is given and is called with valid ones.
    unsafe {
        let library = libloading::Library::new(&path)
            .map_err(|error| format!("{} does not load ({error})", path.display()))?;
        let version: libloading::Symbol<unsafe extern "C" fn(*mut i32, *mut i32) -> i32> = library
            .get(b"nvrtcVersion\0")
            .map_err(|error| format!("{} has no nvrtcVersion ({error})", path.display()))?;
        let (mut major, mut minor) = (0, 0);
        match version(&mut major, &mut minor) {
            0 => Ok((major, minor)),
            status => Err(format!("nvrtcVersion failed with status {status}")),
        }
    }
}

/// An exclusive lock on the cache for one piece, held while it is installed; other processes
/// (and other threads, which open the file anew) wait for it.
#[derive(Debug)]
struct CacheLock {
    _file: std::fs::File,
}

impl CacheLock {
    fn take(cache: &Path, piece: Piece) -> Result<Self, ProvisionError> {
        let path = cache.join(format!(".{}.lock", piece.folder_name()));
        let file = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .map_err(|error| ProvisionError::io("open", &path, &error))?;
        lock_exclusive(&file, piece, &path)?;
        Ok(Self { _file: file })
    }
}

#[cfg(unix)]
fn lock_exclusive(file: &std::fs::File, piece: Piece, path: &Path) -> Result<(), ProvisionError> {
    use std::os::fd::AsRawFd;
    // SAFETY: flock on a descriptor this function's caller keeps open; the lock goes with it.
    if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } == 0 {
        return Ok(());
    }
    eprintln!(
        "racetrack: waiting for another Racetrack process to finish fetching {}",
        piece.what()
    );
    loop {
        // SAFETY: as above.
        if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX) } == 0 {
            return Ok(());
        }
        let error = std::io::Error::last_os_error();
        if error.kind() != std::io::ErrorKind::Interrupted {
            return Err(ProvisionError::io("lock", path, &error));
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[cfg(not(unix))]
fn lock_exclusive(
    _file: &std::fs::File,
    _piece: Piece,
    _path: &Path,
) -> Result<(), ProvisionError> {
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pieces_are_cached_under_their_pins() {
        assert_eq!(Piece::Nvrtc.folder_name(), "nvrtc-13.0.88");
        assert_eq!(Piece::Headers.folder_name(), "headers-13.0.96-13.0.85");
        assert_eq!(
            Piece::Nvcc.folder_name(),
            "nvcc-13.0.88-13.0.88-13.0.88-13.0.96-13.0.85-13.0.85-13.0.85"
        );
        assert!(PINNED_NVCC.ends_with(PINNED_NVCC_VERSION));
        assert_eq!(
            Piece::Headers.manual_command(),
            "python3 -m pip install nvidia-cuda-runtime==13.0.96 nvidia-cuda-cccl==13.0.85"
        );
    }

    #[test]
    fn a_staging_folder_is_never_complete() {
        let dir =
            std::env::temp_dir().join(format!("racetrack-provision-test-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("nvidia/cu13/include")).unwrap_or_default();
        assert!(Piece::Headers.is_complete(&dir).is_err());
        assert!(Piece::Nvrtc.is_complete(&dir).is_err());
        assert!(Piece::Nvcc.is_complete(&dir).is_err());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
