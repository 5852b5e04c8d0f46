//! `racetrack doctor`: what this machine has for Racetrack, where each piece came from, and
//! what to do about each one that is missing.

use std::fmt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::compile_cache::{CACHE_ENV, CompileCache};
use crate::nvcc::{self, NvccNotFound};
use crate::nvrtc::{self, PINNED_VERSION};
use crate::provision::{self, Piece};

/// The mdbook the book is built with (as `.ci/run` installs it).
pub const MDBOOK_VERSION: &str = "0.5.4";

/// One piece: what was found (and where it came from), or what to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Row {
    pub piece: &'static str,
    pub found: Option<String>,
    /// What it is for, or, when missing, what to do.
    pub note: String,
}

impl Row {
    fn found(piece: &'static str, found: String, note: impl Into<String>) -> Self {
        Self {
            piece,
            found: Some(found),
            note: note.into(),
        }
    }

    fn missing(piece: &'static str, note: impl Into<String>) -> Self {
        Self {
            piece,
            found: None,
            note: note.into(),
        }
    }
}

/// Every row, in the order a learner needs them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnosis {
    pub rows: Vec<Row>,
}

impl Diagnosis {
    /// Looks at the machine; fetches nothing.
    pub fn examine() -> Self {
        Self {
            rows: vec![
                gpu(),
                nvrtc_row(),
                headers_row(),
                nvcc_row(),
                host_compiler_row(),
                python_row(),
                cache_row(),
                compile_cache_row(),
                cublas_row(),
                nccl_row(),
                mdbook_row(),
                chromium_row(),
            ],
        }
    }
}

impl fmt::Display for Diagnosis {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let width = self
            .rows
            .iter()
            .map(|row| row.piece.len())
            .max()
            .unwrap_or(0);
        for row in &self.rows {
            match &row.found {
                Some(found) => {
                    writeln!(f, "✓ {:width$}  {found}", row.piece)?;
                    if !row.note.is_empty() {
                        writeln!(f, "  {:width$}  {}", "", row.note)?;
                    }
                }
                None => {
                    writeln!(f, "✗ {:width$}  {}", row.piece, row.note)?;
                }
            }
        }
        Ok(())
    }
}

/// Where a library was found, as a user would name its origin.
pub fn origin(path: &Path) -> &'static str {
    if provision::cache_root().is_some_and(|cache| path.starts_with(cache)) {
        return "Racetrack's cache";
    }
    if path.components().any(|part| {
        let part = part.as_os_str();
        part == "site-packages" || part == "dist-packages"
    }) {
        return "pip, in python3's site-packages";
    }
    let under = |var: &str| std::env::var_os(var).is_some_and(|dir| path.starts_with(dir));
    if under("CUDA_PATH") || path.starts_with("/usr/local/cuda") {
        return "a CUDA toolkit";
    }
    if std::env::var_os("LD_LIBRARY_PATH")
        .is_some_and(|paths| std::env::split_paths(&paths).any(|dir| path.starts_with(dir)))
    {
        return "LD_LIBRARY_PATH";
    }
    "the system's library path"
}

fn shown(path: &Path) -> String {
    format!("{} ({})", provision::display_path(path), origin(path))
}

fn gpu() -> Row {
    const PIECE: &str = "GPU and driver";
    if !crate::backend::cuda_driver_present() {
        return Row::missing(
            PIECE,
            "none: no NVIDIA driver (libcuda) here, so everything runs on Racetrack's PTX emulator; on a machine with an NVIDIA GPU, install its driver (580 or newer for CUDA 13.0)",
        );
    }
    let mut version = 0;
    // SAFETY: the driver library is present (checked above); one int is written.
    let status = unsafe { cudarc::driver::sys::cuDriverGetVersion(&mut version) };
    let driver = if status == cudarc::driver::sys::CUresult::CUDA_SUCCESS {
        format!("driver for CUDA {}.{}", version / 1000, version % 1000 / 10)
    } else {
        "driver of unknown version".to_string()
    };
    match crate::Device::open(crate::BackendChoice::Cuda) {
        Ok(device) => {
            let count = cudarc::driver::result::device::get_count().unwrap_or(1);
            let others = if count > 1 {
                format!(" and {} more", count - 1)
            } else {
                String::new()
            };
            Row::found(
                PIECE,
                format!("{}{others}, {driver}", device.name()),
                "`--backend auto` runs on it",
            )
        }
        Err(error) => Row::missing(
            PIECE,
            format!("a {driver} is here, but no usable device: {error}"),
        ),
    }
}

/// What NVRTC is for: not `racetrack run`, whose programs nvcc builds.
const NVRTC_USE: &str = "compiles the kernels of `racetrack check`, the chapters, the exercises and the Python faces; `racetrack run` builds with nvcc instead";

fn nvrtc_row() -> Row {
    const PIECE: &str = "NVRTC";
    let pinned = format!("{}.{}", PINNED_VERSION.0, PINNED_VERSION.1);
    match nvrtc::nvrtc() {
        Some(found) => {
            let version = format!("{}.{}", found.version.0, found.version.1);
            let place = found
                .path
                .as_deref()
                .map_or_else(|| "found by the system loader".to_string(), shown);
            let note = if found.is_pinned() {
                NVRTC_USE.to_string()
            } else {
                format!(
                    "kernels/ptx/ is generated by NVRTC {pinned}; `racetrack ptx` and its test need that one: `{}`",
                    Piece::Nvrtc.manual_command()
                )
            };
            Row::found(PIECE, format!("{version} at {place}"), note)
        }
        None => Row::missing(
            PIECE,
            fetch_advice(Piece::Nvrtc, &nvrtc::searched_places(), NVRTC_USE),
        ),
    }
}

fn headers_row() -> Row {
    const PIECE: &str = "CUDA headers";
    let dirs = nvrtc::cuda_include_dirs();
    if nvrtc::has_cuda_headers(&dirs) {
        let first = dirs
            .iter()
            .find(|dir| dir.join("cooperative_groups.h").is_file())
            .unwrap_or(&dirs[0]);
        return Row::found(
            PIECE,
            shown(first),
            "for `racetrack check` on files that include cuda_fp16.h, cooperative_groups.h, CUB",
        );
    }
    Row::missing(
        PIECE,
        fetch_advice(
            Piece::Headers,
            &nvrtc::searched_places(),
            "only `racetrack check` on files that include them needs them",
        ),
    )
}

fn nvcc_row() -> Row {
    const PIECE: &str = "nvcc";
    match nvcc::find_nvcc() {
        Ok(found) => Row::found(
            PIECE,
            format!(
                "{} at {} ({})",
                found.version,
                provision::display_path(&found.nvcc),
                found.found
            ),
            "`racetrack run` builds whole programs with it",
        ),
        Err(NvccNotFound::Nowhere { searched }) => Row::missing(
            PIECE,
            fetch_advice(
                Piece::Nvcc,
                &searched,
                "only `racetrack run` needs it, for whole programs",
            ),
        ),
        Err(refused) => Row::missing(PIECE, refused.to_string()),
    }
}

fn host_compiler_row() -> Row {
    const PIECE: &str = "C++ compiler";
    match nvcc::host_compiler() {
        Ok(found) => {
            let chosen = if found.found == "PATH" {
                String::new()
            } else {
                format!(", chosen by {}", found.found)
            };
            Row::found(
                PIECE,
                format!("{} at {}{chosen}", found.version, found.path.display()),
                "nvcc builds the host code of `racetrack run`'s programs with it",
            )
        }
        Err(error) => Row::missing(PIECE, format!("{error}; only `racetrack run` needs it")),
    }
}

fn fetch_advice(piece: Piece, searched: &str, what_for: &str) -> String {
    let fetch = if std::env::var_os(provision::OFFLINE_ENV).is_some() {
        format!("{} is set, so it is not fetched", provision::OFFLINE_ENV)
    } else {
        "fetched into Racetrack's cache the first time it is needed (or now: `racetrack doctor --fetch`)".to_string()
    };
    format!(
        "not found in {searched} ({what_for}): {fetch}; by hand: `{}`",
        piece.manual_command()
    )
}

fn python_row() -> Row {
    const PIECE: &str = "python3 + pip";
    match provision::pip_version() {
        Ok(said) => {
            let pip = said
                .split_whitespace()
                .take(2)
                .collect::<Vec<_>>()
                .join(" ");
            let python = said
                .rsplit_once("(python ")
                .map_or("", |(_, version)| version.trim_end_matches(')'));
            Row::found(
                PIECE,
                format!("python {python}, {pip}"),
                "what Racetrack fetches NVRTC, the headers and nvcc with",
            )
        }
        Err(problem) => Row::missing(
            PIECE,
            format!(
                "{problem}, so Racetrack cannot fetch NVRTC; install python3 with pip (Debian: apt-get install python3-pip), or a CUDA toolkit"
            ),
        ),
    }
}

fn cache_row() -> Row {
    const PIECE: &str = "Racetrack's cache";
    match provision::cache_root() {
        Some(root) => {
            let held: Vec<String> = [Piece::Nvrtc, Piece::Headers, Piece::Nvcc]
                .into_iter()
                .filter(|piece| provision::installed(*piece).is_some())
                .map(Piece::folder_name)
                .collect();
            let held = if held.is_empty() {
                "empty".to_string()
            } else {
                held.join(", ")
            };
            let source = if std::env::var_os("XDG_CACHE_HOME").is_some() {
                "XDG_CACHE_HOME"
            } else {
                "~/.cache"
            };
            Row::found(
                PIECE,
                format!("{} ({held})", provision::display_path(&root)),
                format!("under {source}; delete it to fetch again"),
            )
        }
        None => Row::missing(
            PIECE,
            "neither XDG_CACHE_HOME nor HOME is set, so nothing can be fetched",
        ),
    }
}

fn compile_cache_row() -> Row {
    const PIECE: &str = "Compile cache";
    let Some(cache) = CompileCache::for_user() else {
        let why = if provision::cache_root().is_some() {
            format!("off ({CACHE_ENV} is set): NVRTC compiles every file every time")
        } else {
            "no cache folder (neither XDG_CACHE_HOME nor HOME is set): NVRTC compiles every file every time".to_string()
        };
        return Row::missing(PIECE, why);
    };
    let place = provision::display_path(cache.dir());
    match cache.usage() {
        Ok(usage) => Row::found(
            PIECE,
            format!(
                "{place}: {} in {} entr{}, at most {}",
                bytes(usage.bytes),
                usage.entries,
                if usage.entries == 1 { "y" } else { "ies" },
                bytes(cache.cap_bytes())
            ),
            "what NVRTC made of files that have not changed since; deleting it is always safe",
        ),
        Err(error) => Row::missing(
            PIECE,
            format!("{error}; NVRTC compiles as if there were no cache (deleting {place} is safe)"),
        ),
    }
}

/// `64 MiB`, `1.5 MiB`, `12 KiB`, `300 bytes`.
pub fn bytes(count: u64) -> String {
    const KIB: u64 = 1 << 10;
    const MIB: u64 = 1 << 20;
    if count >= MIB && count.is_multiple_of(MIB) {
        format!("{} MiB", count / MIB)
    } else if count >= MIB {
        format!("{:.1} MiB", count as f64 / MIB as f64)
    } else if count >= KIB {
        format!("{:.0} KiB", count as f64 / KIB as f64)
    } else {
        format!("{count} bytes")
    }
}

fn cublas_row() -> Row {
    const PIECE: &str = "cuBLAS";
    match nvrtc::find_library("libcublas.so.13") {
        Some(path) => Row::found(
            PIECE,
            shown(&path),
            "the vendor rows of ch5's and ch7's GPU tables",
        ),
        None => Row::missing(
            PIECE,
            format!(
                "optional: only the vendor rows of ch5's and ch7's GPU tables use it; {}",
                crate::device::CUBLAS_HOW_TO_GET
            ),
        ),
    }
}

fn nccl_row() -> Row {
    const PIECE: &str = "NCCL";
    match nvrtc::find_nccl() {
        Some(path) => Row::found(
            PIECE,
            shown(&path),
            "the vendor row of ch8's all-reduce table, on two GPUs or more",
        ),
        None => Row::missing(
            PIECE,
            format!(
                "optional: only the vendor row of ch8's all-reduce table uses it; {}",
                crate::device::NCCL_HOW_TO_GET
            ),
        ),
    }
}

fn version_of(program: &str, args: &[&str]) -> Option<String> {
    let output = Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .ok()?;
    output.status.success().then(|| {
        String::from_utf8_lossy(&output.stdout)
            .lines()
            .next()
            .unwrap_or_default()
            .trim()
            .to_string()
    })
}

fn on_path(program: &str) -> Option<PathBuf> {
    let paths = std::env::var_os("PATH")?;
    std::env::split_paths(&paths)
        .map(|dir| dir.join(program))
        .find(|path| path.is_file())
}

fn mdbook_row() -> Row {
    const PIECE: &str = "mdbook";
    let install = format!("cargo install mdbook --version {MDBOOK_VERSION} --locked");
    match version_of("mdbook", &["--version"]) {
        Some(version) if version.ends_with(MDBOOK_VERSION) => {
            Row::found(PIECE, version, "`mdbook serve book` builds the book")
        }
        Some(version) => Row::found(
            PIECE,
            version,
            format!("the book is pinned to {MDBOOK_VERSION}: `{install}`"),
        ),
        None => Row::missing(
            PIECE,
            format!("not found (only the book needs it): `{install}`"),
        ),
    }
}

fn chromium_row() -> Row {
    const PIECE: &str = "Chromium";
    match on_path("chromium") {
        Some(path) => Row::found(
            PIECE,
            format!(
                "{} at {}",
                version_of("chromium", &["--version"]).unwrap_or_else(|| "chromium".into()),
                path.display()
            ),
            "book/tests/players.mjs replays the trace players in it",
        ),
        None => Row::missing(
            PIECE,
            "not found (only the book's player test needs it): Debian's `apt-get install chromium`",
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_row_says_what_it_found_or_what_to_do() {
        let diagnosis = Diagnosis::examine();
        let pieces: Vec<&str> = diagnosis.rows.iter().map(|row| row.piece).collect();
        for piece in [
            "GPU and driver",
            "NVRTC",
            "CUDA headers",
            "nvcc",
            "C++ compiler",
            "Compile cache",
            "cuBLAS",
            "mdbook",
            "Chromium",
        ] {
            assert!(
                pieces.contains(&piece),
                "{piece} is missing from {pieces:?}"
            );
        }
        for row in &diagnosis.rows {
            if row.found.is_none() {
                assert!(
                    !row.note.is_empty(),
                    "{} is missing and says nothing",
                    row.piece
                );
            }
        }
        let text = diagnosis.to_string();
        assert_eq!(
            text.lines()
                .filter(|line| line.starts_with(['✓', '✗']))
                .count(),
            diagnosis.rows.len()
        );
    }

    #[test]
    fn sizes_read_as_people_say_them() {
        assert_eq!(bytes(300), "300 bytes");
        assert_eq!(bytes(12 << 10), "12 KiB");
        assert_eq!(bytes(3 << 19), "1.5 MiB");
        assert_eq!(bytes(crate::compile_cache::DEFAULT_CAP_BYTES), "64 MiB");
    }

    #[test]
    fn origins_are_named_as_users_know_them() {
        assert_eq!(
            origin(Path::new(
                "/usr/lib/python3/dist-packages/nvidia/cu13/lib/libnvrtc.so.13"
            )),
            "pip, in python3's site-packages"
        );
        assert_eq!(
            origin(Path::new("/usr/local/cuda/lib64/libnvrtc.so.13")),
            "a CUDA toolkit"
        );
        if let Some(cache) = provision::cache_root() {
            assert_eq!(
                origin(&cache.join("nvrtc-13.0.88/x.so")),
                "Racetrack's cache"
            );
        }
    }
}
