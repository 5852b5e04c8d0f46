//! Finding nvcc, which builds whole CUDA programs (host code, `main` and all) for
//! `racetrack run`, and the host C++ compiler it hands their host code to.
//!
//! Only nvcc 13.0 is taken, the release of the pinned NVRTC: its programs link against
//! `libcudart.so.13`, the soname Racetrack's own runtime answers to, and the PTX it embeds is
//! what driver 580 loads. Whatever the user installed wins over Racetrack's cache, as for NVRTC;
//! a machine with a CUDA 13.0 toolkit and no network finds its nvcc and fetches nothing.

use std::ffi::{OsStr, OsString};
use std::fmt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};

use crate::error::{HarnessError, Result};
use crate::nvrtc::PINNED_VERSION;
use crate::provision::{self, Piece};

/// A path to the nvcc binary to use, ahead of every other place; one that is not nvcc 13.0 is
/// an error rather than passed over, since the user asked for it by name.
pub const NVCC_ENV: &str = "RACETRACK_NVCC";

/// nvcc's own variable for its default host compiler (a folder, or the compiler itself).
pub const CCBIN_ENV: &str = "NVCC_CCBIN";

/// Where the toolkit installers put CUDA.
const TOOLKIT: &str = "/usr/local/cuda";

/// Where a [`Toolchain`] was found, for `racetrack doctor` and the sentences that name it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    /// [`NVCC_ENV`].
    Env,
    /// `CUDA_PATH/bin/nvcc`.
    CudaPath,
    /// `/usr/local/cuda/bin/nvcc`.
    Toolkit,
    /// The first nvcc 13.0 on `PATH`.
    Path,
    /// A pip-installed `nvidia/cu13/bin/nvcc` in python3's site-packages.
    SitePackages,
    /// Racetrack's cache, fetched there by [`require_nvcc`] or `racetrack doctor --fetch`.
    Cache,
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Env => NVCC_ENV,
            Self::CudaPath => "CUDA_PATH",
            Self::Toolkit => "a CUDA toolkit",
            Self::Path => "PATH",
            Self::SitePackages => "pip, in python3's site-packages",
            Self::Cache => "Racetrack's cache",
        })
    }
}

/// An nvcc 13.0 and the folders a program built with it needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Toolchain {
    pub nvcc: PathBuf,
    /// As nvcc prints it after `V`: `13.0.88`.
    pub version: String,
    pub found: Origin,
    /// The folder holding NVIDIA's `libcudart.so.13`, for running a program on NVIDIA's runtime.
    pub runtime_lib_dir: PathBuf,
    /// The folder holding `cuda_runtime.h`.
    pub include_dir: PathBuf,
    /// Folders the host linker must search besides those nvcc's profile names, for a pip
    /// install that Racetrack did not complete itself (see [`Toolchain::at`]).
    link_dirs: Vec<PathBuf>,
}

impl Toolchain {
    /// The ptxas beside nvcc, which counts a kernel's registers as a GPU's driver does when it
    /// compiles the program's PTX.
    pub fn ptxas(&self) -> Option<PathBuf> {
        Some(self.nvcc.with_file_name("ptxas")).filter(|p| p.is_file())
    }

    /// The toolchain of the nvcc at `nvcc`, when it is nvcc 13.0 with CUDA's runtime library and
    /// headers beside it; else why not, as a clause that follows the path ("is nvcc 12.4.131,
    /// not 13.0").
    ///
    /// A pip install of nvcc's wheels lacks what its profile expects: the profile links from
    /// `lib64/` while the wheels ship `lib/`, and `-cudart shared` wants `libcudart.so` while
    /// the runtime's wheel has only `libcudart.so.13`. Racetrack's cache adds both links when it
    /// installs; for an install elsewhere, which is not Racetrack's to change, the linker is
    /// pointed at `lib/` and at a folder in Racetrack's cache holding the one link.
    pub fn at(nvcc: &Path, found: Origin) -> std::result::Result<Self, String> {
        let real = nvcc
            .canonicalize()
            .map_err(|error| format!("cannot be found ({error})"))?;
        let version = probe(nvcc)?;
        let wanted = wanted_release();
        if version.release != wanted {
            return Err(format!("is nvcc {}, not {wanted}", version.full));
        }
        let root = real
            .parent()
            .and_then(Path::parent)
            .ok_or_else(|| "is not in a toolkit's bin/ folder".to_string())?;
        let targets: Vec<PathBuf> = std::fs::read_dir(root.join("targets"))
            .map(|entries| {
                let mut dirs: Vec<PathBuf> = entries.flatten().map(|entry| entry.path()).collect();
                dirs.sort();
                dirs
            })
            .unwrap_or_default();
        let runtime_lib_dir = [root.join("lib64"), root.join("lib")]
            .into_iter()
            .chain(targets.iter().map(|target| target.join("lib")))
            .find(|dir| dir.join("libcudart.so.13").is_file())
            .ok_or_else(|| {
                format!(
                    "has no libcudart.so.13 beside it (in {}/lib64, lib or targets/*/lib)",
                    root.display()
                )
            })?;
        let include_dir = std::iter::once(root.join("include"))
            .chain(targets.iter().map(|target| target.join("include")))
            .find(|dir| dir.join("cuda_runtime.h").is_file())
            .ok_or_else(|| {
                format!(
                    "has no cuda_runtime.h beside it (in {}/include or targets/*/include)",
                    root.display()
                )
            })?;
        let mut link_dirs = Vec::new();
        if runtime_lib_dir == root.join("lib") && !root.join("lib64").exists() {
            link_dirs.push(runtime_lib_dir.clone());
        }
        if !runtime_lib_dir.join("libcudart.so").exists()
            && let Some(dir) = unversioned_runtime(&runtime_lib_dir)
        {
            link_dirs.push(dir);
        }
        Ok(Self {
            nvcc: nvcc.to_path_buf(),
            version: version.full,
            found,
            runtime_lib_dir,
            include_dir,
            link_dirs,
        })
    }

    /// nvcc, with the environment it needs to compile and link: add the arguments and run.
    pub fn command(&self) -> Command {
        let mut command = Command::new(&self.nvcc);
        if !self.link_dirs.is_empty() {
            // gcc's driver searches LIBRARY_PATH for `-l` after the `-L` folders nvcc passes.
            let mut dirs = self.link_dirs.clone();
            if let Some(existing) = std::env::var_os("LIBRARY_PATH") {
                dirs.extend(
                    std::env::split_paths(&existing).filter(|dir| !dir.as_os_str().is_empty()),
                );
            }
            if let Ok(joined) = std::env::join_paths(dirs) {
                command.env("LIBRARY_PATH", joined);
            }
        }
        command
    }
}

/// `13.0`: the release every accepted nvcc must be.
fn wanted_release() -> String {
    format!("{}.{}", PINNED_VERSION.0, PINNED_VERSION.1)
}

/// What `nvcc --version` says: `release 13.0, V13.0.88`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct NvccVersion {
    /// `13.0`
    pub release: String,
    /// `13.0.88`, or the release when nvcc prints no `V` part.
    pub full: String,
}

/// Asks `nvcc --version`; the error is a clause that follows the path ("does not run (…)").
pub(crate) fn probe(nvcc: &Path) -> std::result::Result<NvccVersion, String> {
    let output = Command::new(nvcc)
        .arg("--version")
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .map_err(|error| format!("does not run ({error})"))?;
    if !output.status.success() {
        return Err(format!("fails when asked its version ({})", output.status));
    }
    parse_version(&String::from_utf8_lossy(&output.stdout))
        .ok_or_else(|| "does not say its release when asked `--version`".to_string())
}

fn parse_version(said: &str) -> Option<NvccVersion> {
    said.lines().find_map(|line| {
        let (_, rest) = line.split_once("release ")?;
        let (release, after) = rest.split_once(',').unwrap_or((rest, ""));
        let release = release.trim();
        if release.is_empty() {
            return None;
        }
        let full = after
            .trim()
            .strip_prefix('V')
            .map(|version| version.split_whitespace().next().unwrap_or(version))
            .filter(|version| !version.is_empty())
            .unwrap_or(release);
        Some(NvccVersion {
            release: release.to_string(),
            full: full.to_string(),
        })
    })
}

/// A folder holding `libcudart.so`, linked to `lib`'s `libcudart.so.13`, under Racetrack's
/// cache (the temporary folder without one); `None` when it cannot be made, and the link then
/// fails with the linker's own message.
fn unversioned_runtime(lib: &Path) -> Option<PathBuf> {
    let target = lib.join("libcudart.so.13");
    let key = blake3::hash(target.as_os_str().as_encoded_bytes()).to_hex();
    let key = &key.as_str()[..16];
    let dir = match provision::cache_root() {
        Some(cache) => cache.join("nvcc-links").join(key),
        None => std::env::temp_dir().join(format!("racetrack-nvcc-links-{key}")),
    };
    let link = dir.join("libcudart.so");
    if std::fs::read_link(&link).is_ok_and(|existing| existing == target) {
        return Some(dir);
    }
    std::fs::create_dir_all(&dir).ok()?;
    // Made aside and renamed over, so that concurrent runs never see a missing or wrong link.
    static MADE: AtomicU64 = AtomicU64::new(0);
    let staging = dir.join(format!(
        ".libcudart.so-{}-{}",
        std::process::id(),
        MADE.fetch_add(1, Ordering::Relaxed)
    ));
    let _ = std::fs::remove_file(&staging);
    symlink(&target, &staging).ok()?;
    if std::fs::rename(&staging, &link).is_err() {
        let _ = std::fs::remove_file(&staging);
        return None;
    }
    Some(dir)
}

#[cfg(unix)]
fn symlink(target: &Path, link: &Path) -> std::io::Result<()> {
    std::os::unix::fs::symlink(target, link)
}

#[cfg(not(unix))]
fn symlink(_target: &Path, _link: &Path) -> std::io::Result<()> {
    Err(std::io::ErrorKind::Unsupported.into())
}

/// Why no nvcc 13.0 was found, without fetching.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NvccNotFound {
    #[error(
        "{NVCC_ENV} is {}, which {problem}; Racetrack needs nvcc {major}.{minor}: point {NVCC_ENV} at one, or unset it so that Racetrack finds or fetches one",
        path.display(), major = PINNED_VERSION.0, minor = PINNED_VERSION.1
    )]
    Refused { path: PathBuf, problem: String },
    /// `searched` lists the places, with what was passed over in each.
    #[error("nvcc was not found in {searched}")]
    Nowhere { searched: String },
}

/// What the lookup reads from the environment, apart so that its order can be tested.
struct Places<'a> {
    env_nvcc: Option<PathBuf>,
    cuda_path: Option<PathBuf>,
    toolkit: PathBuf,
    path: Vec<PathBuf>,
    /// Asked only when every place before them failed: it may start python3.
    site_dirs: &'a dyn Fn() -> Vec<PathBuf>,
    /// The cache's nvcc piece, when installed.
    cache_piece: Option<PathBuf>,
    /// How the cache is named in sentences.
    cache_shown: Option<String>,
}

impl Places<'_> {
    fn from_env() -> Places<'static> {
        let non_empty = |name: &str| {
            std::env::var_os(name)
                .filter(|value| !value.is_empty())
                .map(PathBuf::from)
        };
        Places {
            env_nvcc: non_empty(NVCC_ENV),
            cuda_path: non_empty("CUDA_PATH"),
            toolkit: PathBuf::from(TOOLKIT),
            path: std::env::var_os("PATH")
                .map(|paths| std::env::split_paths(&paths).collect())
                .unwrap_or_default(),
            site_dirs: &python_site_dirs,
            cache_piece: provision::installed(Piece::Nvcc),
            cache_shown: provision::cache_root().map(|root| provision::display_path(&root)),
        }
    }
}

fn python_site_dirs() -> Vec<PathBuf> {
    crate::nvrtc::python_site_dirs().to_vec()
}

/// The places looked in so far, each with what was passed over there.
#[derive(Default)]
struct Search {
    places: Vec<(String, Vec<String>)>,
    seen: Vec<PathBuf>,
}

impl Search {
    fn place(&mut self, name: String) {
        self.places.push((name, Vec::new()));
    }

    /// The toolchain at `nvcc` when it is one; else notes why under the current place.
    fn consider(&mut self, nvcc: &Path, found: Origin) -> Option<Toolchain> {
        if !nvcc.is_file() {
            return None;
        }
        let real = nvcc.canonicalize().unwrap_or_else(|_| nvcc.to_path_buf());
        if self.seen.contains(&real) {
            return None;
        }
        self.seen.push(real);
        match Toolchain::at(nvcc, found) {
            Ok(toolchain) => Some(toolchain),
            Err(problem) => {
                if let Some((_, notes)) = self.places.last_mut() {
                    notes.push(format!("{} {problem}", provision::display_path(nvcc)));
                }
                None
            }
        }
    }

    fn searched(&self) -> String {
        let shown: Vec<String> = self
            .places
            .iter()
            .map(|(place, notes)| {
                if notes.is_empty() {
                    place.clone()
                } else {
                    format!("{place} ({})", notes.join("; "))
                }
            })
            .collect();
        match shown.split_last() {
            Some((last, rest)) if !rest.is_empty() => format!("{} and {last}", rest.join(", ")),
            _ => shown.join(""),
        }
    }
}

fn search(places: &Places<'_>) -> std::result::Result<Toolchain, NvccNotFound> {
    if let Some(path) = &places.env_nvcc {
        return Toolchain::at(path, Origin::Env).map_err(|problem| NvccNotFound::Refused {
            path: path.clone(),
            problem,
        });
    }
    let mut search = Search::default();
    search.place("CUDA_PATH".to_string());
    if let Some(cuda) = &places.cuda_path
        && let Some(found) = search.consider(&cuda.join("bin/nvcc"), Origin::CudaPath)
    {
        return Ok(found);
    }
    search.place(TOOLKIT.to_string());
    if let Some(found) = search.consider(&places.toolkit.join("bin/nvcc"), Origin::Toolkit) {
        return Ok(found);
    }
    search.place("PATH".to_string());
    for dir in &places.path {
        if let Some(found) = search.consider(&dir.join("nvcc"), Origin::Path) {
            return Ok(found);
        }
    }
    search.place("python3's site-packages (nvidia/cu13)".to_string());
    for site in (places.site_dirs)() {
        if let Some(found) =
            search.consider(&site.join("nvidia/cu13/bin/nvcc"), Origin::SitePackages)
        {
            return Ok(found);
        }
    }
    if let Some(cache) = &places.cache_shown {
        search.place(format!("Racetrack's cache ({cache})"));
    }
    if let Some(piece) = &places.cache_piece
        && let Some(found) = search.consider(&piece.join("nvidia/cu13/bin/nvcc"), Origin::Cache)
    {
        return Ok(found);
    }
    Err(NvccNotFound::Nowhere {
        searched: search.searched(),
    })
}

/// nvcc 13.0 where it is already installed, in this order: [`NVCC_ENV`], `CUDA_PATH/bin/nvcc`,
/// `/usr/local/cuda/bin/nvcc`, `PATH`, a pip-installed `nvidia/cu13/bin/nvcc` in python3's
/// site-packages, Racetrack's cache. Never fetches: code that builds calls [`require_nvcc`].
pub fn find_nvcc() -> std::result::Result<Toolchain, NvccNotFound> {
    search(&Places::from_env())
}

/// [`find_nvcc`], else the pinned wheels fetched into Racetrack's cache (see [`provision`]).
/// The error is one sentence with what to do.
pub fn require_nvcc() -> Result<Toolchain> {
    let searched = match find_nvcc() {
        Ok(found) => return Ok(found),
        Err(refused @ NvccNotFound::Refused { .. }) => {
            return Err(HarnessError::NoNvcc(refused.to_string()));
        }
        Err(NvccNotFound::Nowhere { searched }) => searched,
    };
    let root = provision::fetch(Piece::Nvcc, &searched)
        .map_err(|error| HarnessError::NoNvcc(error.to_string()))?;
    Toolchain::at(&root.join("nvidia/cu13/bin/nvcc"), Origin::Cache).map_err(|problem| {
        HarnessError::NoNvcc(format!(
            "nvcc was fetched into {}, but it {problem}; remove that folder and run again",
            provision::display_path(&root)
        ))
    })
}

/// The C++ compiler nvcc hands a program's host code to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostCompiler {
    pub path: PathBuf,
    /// The first line of its `--version`: `g++ (Debian 12.2.0-14) 12.2.0`.
    pub version: String,
    /// What chose it: `PATH`, [`CCBIN_ENV`] or `-ccbin`.
    pub found: &'static str,
}

/// The compiler nvcc uses by default: [`CCBIN_ENV`] when set, else `g++` on `PATH`.
pub fn host_compiler() -> Result<HostCompiler> {
    host_compiler_for(None)
}

/// [`host_compiler`] for a build given `-ccbin ccbin`, which outranks [`CCBIN_ENV`] as it does
/// in nvcc. Like nvcc, takes a folder (its `g++`), a compiler's path, or a name on `PATH`.
pub fn host_compiler_for(ccbin: Option<&OsStr>) -> Result<HostCompiler> {
    let named: Option<(OsString, &'static str)> = match ccbin {
        Some(ccbin) => Some((ccbin.to_os_string(), "-ccbin")),
        None => std::env::var_os(CCBIN_ENV)
            .filter(|value| !value.is_empty())
            .map(|value| (value, CCBIN_ENV)),
    };
    let (path, found) = match named {
        None => {
            let path = on_path(OsStr::new("g++")).ok_or_else(|| {
                HarnessError::NoHostCompiler(format!(
                    "nvcc builds a program's host code with g++, which is not on PATH: install it ({})",
                    install_advice(&std::fs::read_to_string("/etc/os-release").unwrap_or_default())
                ))
            })?;
            (path, "PATH")
        }
        Some((named, found)) => {
            let given = PathBuf::from(&named);
            let path = if given.is_dir() {
                Some(given.join("g++")).filter(|path| path.is_file())
            } else if given.components().count() == 1 {
                on_path(&named)
            } else {
                Some(given).filter(|path| path.is_file())
            };
            let path = path.ok_or_else(|| {
                HarnessError::NoHostCompiler(format!(
                    "{found} is {}, which is not a C++ compiler here (a folder holding g++, a compiler's path, or a name on PATH); point it at one, or leave it out to use g++ from PATH",
                    named.to_string_lossy()
                ))
            })?;
            (path, found)
        }
    };
    let output = Command::new(&path)
        .arg("--version")
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output();
    let version = match output {
        Ok(output) if output.status.success() => String::from_utf8_lossy(&output.stdout)
            .lines()
            .next()
            .unwrap_or_default()
            .trim()
            .to_string(),
        Ok(output) => {
            return Err(HarnessError::NoHostCompiler(format!(
                "{} (chosen by {found}) fails when asked `--version` ({}); nvcc cannot build host code with it",
                path.display(),
                output.status
            )));
        }
        Err(error) => {
            return Err(HarnessError::NoHostCompiler(format!(
                "{} (chosen by {found}) does not run ({error}); nvcc cannot build host code with it",
                path.display()
            )));
        }
    };
    Ok(HostCompiler {
        path,
        version,
        found,
    })
}

fn on_path(program: &OsStr) -> Option<PathBuf> {
    let paths = std::env::var_os("PATH")?;
    std::env::split_paths(&paths)
        .map(|dir| dir.join(program))
        .find(|path| path.is_file())
}

/// How to install g++ on the distribution `/etc/os-release` describes.
pub fn install_advice(os_release: &str) -> String {
    let field = |name: &str| {
        os_release
            .lines()
            .find_map(|line| line.strip_prefix(name)?.strip_prefix('='))
            .map(|value| value.trim_matches(['"', '\'']).to_lowercase())
            .unwrap_or_default()
    };
    let family = format!("{} {}", field("ID"), field("ID_LIKE"));
    let is = |name: &str| family.split_whitespace().any(|word| word == name);
    if is("debian") || is("ubuntu") {
        "`sudo apt install g++`, or `build-essential`".to_string()
    } else if is("fedora") || is("rhel") || is("centos") {
        "`sudo dnf install gcc-c++`".to_string()
    } else if is("arch") {
        "`sudo pacman -S gcc`".to_string()
    } else if is("suse") || is("opensuse") {
        "`sudo zypper install gcc-c++`".to_string()
    } else if is("alpine") {
        "`apk add g++`".to_string()
    } else {
        "your distribution's g++ package: `sudo apt install g++` on Debian and Ubuntu, `sudo dnf install gcc-c++` on Fedora".to_string()
    }
}

#[cfg(test)]
mod tests {
    // Test helpers panic with context on purpose; a failed unwrap is a failed test.
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn versions_are_read_as_nvcc_prints_them() {
        let said = "nvcc: NVIDIA (R) Cuda compiler driver\nCopyright (c) 2005-2025 NVIDIA Corporation\nBuilt on Wed_Aug_20_01:58:59_PM_PDT_2025\nCuda compilation tools, release 13.0, V13.0.88\nBuild cuda_13.0.r13.0/compiler.36424714_0\n";
        assert_eq!(
            parse_version(said),
            Some(NvccVersion {
                release: "13.0".into(),
                full: "13.0.88".into()
            })
        );
        assert_eq!(
            parse_version("Cuda compilation tools, release 12.4"),
            Some(NvccVersion {
                release: "12.4".into(),
                full: "12.4".into()
            })
        );
        assert_eq!(parse_version("gcc (Debian 12.2.0) 12.2.0"), None);
    }

    #[test]
    fn install_advice_names_the_distribution_s_package() {
        assert!(install_advice("ID=debian\n").contains("apt install g++"));
        assert!(install_advice("ID=pop\nID_LIKE=\"ubuntu debian\"\n").contains("apt install g++"));
        assert!(install_advice("ID=\"rocky\"\nID_LIKE=\"rhel centos fedora\"\n").contains("dnf"));
        assert!(install_advice("ID=arch\n").contains("pacman"));
        assert!(install_advice("").contains("apt install g++"));
        assert!(install_advice("").contains("dnf install gcc-c++"));
    }

    /// A stand-in toolkit under `dir/name`: `bin/nvcc` says `release`, with the runtime library
    /// and headers beside it as a pip install has them.
    #[cfg(unix)]
    fn fake_toolkit(dir: &Path, name: &str, release: &str) -> PathBuf {
        use std::os::unix::fs::PermissionsExt;
        let root = dir.join(name);
        std::fs::create_dir_all(root.join("bin")).unwrap();
        std::fs::create_dir_all(root.join("lib")).unwrap();
        std::fs::create_dir_all(root.join("include")).unwrap();
        std::fs::write(root.join("lib/libcudart.so.13"), "").unwrap();
        std::fs::write(root.join("include/cuda_runtime.h"), "").unwrap();
        let nvcc = root.join("bin/nvcc");
        std::fs::write(
            &nvcc,
            format!("#!/bin/sh\necho 'Cuda compilation tools, release {release}, V{release}.1'\n"),
        )
        .unwrap();
        std::fs::set_permissions(&nvcc, std::fs::Permissions::from_mode(0o755)).unwrap();
        root
    }

    #[cfg(unix)]
    fn scratch(name: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("racetrack-nvcc-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[cfg(unix)]
    #[test]
    fn places_are_tried_in_order_and_only_13_0_is_taken() {
        let dir = scratch("order");
        let old = fake_toolkit(&dir, "cuda-12.4", "12.4");
        let cuda_path = fake_toolkit(&dir, "cuda-path", "13.0");
        let toolkit = fake_toolkit(&dir, "usr-local-cuda", "13.0");
        let on_path = fake_toolkit(&dir, "on-path", "13.0");
        let site = dir.join("site");
        let in_site = fake_toolkit(&site.join("nvidia"), "cu13", "13.0");
        let cache = fake_toolkit(&dir.join("cache/nvidia"), "cu13", "13.0");
        let sites = vec![site.clone()];
        let site_dirs = || sites.clone();
        let no_sites = Vec::new;
        let mut places = Places {
            env_nvcc: Some(cuda_path.join("bin/nvcc")),
            cuda_path: Some(cuda_path.clone()),
            toolkit: toolkit.clone(),
            path: vec![dir.join("nowhere"), old.join("bin"), on_path.join("bin")],
            site_dirs: &site_dirs,
            cache_piece: Some(dir.join("cache")),
            cache_shown: Some("the cache".into()),
        };
        let found = |places: &Places<'_>| search(places).map(|found| (found.nvcc, found.found));
        assert_eq!(
            found(&places),
            Ok((cuda_path.join("bin/nvcc"), Origin::Env))
        );
        places.env_nvcc = None;
        assert_eq!(
            found(&places),
            Ok((cuda_path.join("bin/nvcc"), Origin::CudaPath))
        );
        places.cuda_path = Some(old.clone());
        assert_eq!(
            found(&places),
            Ok((toolkit.join("bin/nvcc"), Origin::Toolkit))
        );
        places.toolkit = dir.join("no-toolkit");
        assert_eq!(
            found(&places),
            Ok((on_path.join("bin/nvcc"), Origin::Path)),
            "12.4 first on PATH is passed over"
        );
        places.path.pop();
        assert_eq!(
            found(&places),
            Ok((in_site.join("bin/nvcc"), Origin::SitePackages))
        );
        places.site_dirs = &no_sites;
        let from_cache = search(&places).unwrap();
        assert_eq!(
            (from_cache.nvcc.clone(), from_cache.found),
            (cache.join("bin/nvcc"), Origin::Cache)
        );
        assert_eq!(from_cache.version, "13.0.1");
        assert_eq!(from_cache.runtime_lib_dir, cache.join("lib"));
        assert_eq!(from_cache.include_dir, cache.join("include"));
        places.cache_piece = None;
        let old_nvcc = provision::display_path(&old.join("bin/nvcc"));
        assert_eq!(
            search(&places),
            Err(NvccNotFound::Nowhere {
                searched: format!(
                    "CUDA_PATH ({old_nvcc} is nvcc 12.4.1, not 13.0), /usr/local/cuda, PATH, python3's site-packages (nvidia/cu13) and Racetrack's cache (the cache)"
                )
            }),
            "the same nvcc is judged once"
        );
        places.env_nvcc = Some(old.join("bin/nvcc"));
        let refused = search(&places).unwrap_err().to_string();
        assert!(
            refused.starts_with(&format!(
                "RACETRACK_NVCC is {}, which is nvcc 12.4.1, not 13.0; Racetrack needs nvcc 13.0",
                old.join("bin/nvcc").display()
            )),
            "{refused}"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[cfg(unix)]
    #[test]
    fn a_pip_install_left_as_pip_made_it_links_through_library_path() {
        let dir = scratch("pip-layout");
        let root = fake_toolkit(&dir, "cu13", "13.0");
        let toolchain = Toolchain::at(&root.join("bin/nvcc"), Origin::SitePackages).unwrap();
        assert_eq!(toolchain.link_dirs.len(), 2, "{toolchain:?}");
        assert_eq!(toolchain.link_dirs[0], root.join("lib"));
        let link = toolchain.link_dirs[1].join("libcudart.so");
        assert_eq!(
            std::fs::read_link(&link).unwrap(),
            root.join("lib/libcudart.so.13")
        );
        let command = toolchain.command();
        let library_path = command
            .get_envs()
            .find(|(name, _)| *name == "LIBRARY_PATH")
            .and_then(|(_, value)| value)
            .map(|value| std::env::split_paths(value).collect::<Vec<_>>())
            .unwrap_or_default();
        assert_eq!(library_path[..2], toolchain.link_dirs[..]);

        // Completed as Racetrack's cache completes it: nothing more to say.
        std::os::unix::fs::symlink("lib", root.join("lib64")).unwrap();
        std::os::unix::fs::symlink("libcudart.so.13", root.join("lib/libcudart.so")).unwrap();
        let toolchain = Toolchain::at(&root.join("bin/nvcc"), Origin::Cache).unwrap();
        assert!(toolchain.link_dirs.is_empty(), "{toolchain:?}");
        assert!(toolchain.command().get_envs().next().is_none());
        let _ = std::fs::remove_dir_all(link.parent().unwrap());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
