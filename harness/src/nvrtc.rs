//! Finding, loading and calling NVRTC, the CUDA runtime compiler.
//!
//! cudarc opens libnvrtc by name only, which finds it on the loader's path. Learners more
//! often have it from `pip install nvidia-cuda-nvrtc` or under `CUDA_PATH`, so we open it by
//! full path first: the dynamic loader then hands cudarc the same library when it asks by soname.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use cudarc::nvrtc::{CompileError, CompileOptions};

use crate::error::{HarnessError, Result};

/// The NVRTC every committed PTX file is generated with. Driver 580 loads its PTX ISA 9.0;
/// newer NVRTCs emit PTX that driver refuses.
pub const PINNED_NVRTC: &str = "nvidia-cuda-nvrtc==13.0.88";
pub const PINNED_VERSION: (i32, i32) = (13, 0);

/// The architecture of the PTX the emulator runs and `kernels/ptx/` holds.
pub const EMU_ARCH: &str = "compute_90";

#[derive(Debug, Clone)]
pub struct Nvrtc {
    /// Where it was loaded from; `None` when the system loader found it by name.
    pub path: Option<PathBuf>,
    pub version: (i32, i32),
}

impl Nvrtc {
    pub fn is_pinned(&self) -> bool {
        self.version == PINNED_VERSION
    }
}

/// Locates and loads NVRTC once per process; `None` when it is nowhere to be found.
pub fn nvrtc() -> Option<&'static Nvrtc> {
    static LOADED: OnceLock<Option<Nvrtc>> = OnceLock::new();
    LOADED.get_or_init(load).as_ref()
}

pub fn require_nvrtc() -> Result<&'static Nvrtc> {
    nvrtc().ok_or(HarnessError::NoNvrtc {
        pinned: PINNED_NVRTC,
    })
}

fn load() -> Option<Nvrtc> {
    let path = library_dirs()
        .into_iter()
        .find_map(|dir| preload_from(&dir));
    // SAFETY: only dlopens libnvrtc under its usual names.
    if !unsafe { cudarc::nvrtc::sys::is_culib_present() } {
        return None;
    }
    let (mut major, mut minor) = (0, 0);
    // SAFETY: the library is present (checked above) and both pointers are valid for writes.
    let status = unsafe { cudarc::nvrtc::sys::nvrtcVersion(&mut major, &mut minor) };
    if status != cudarc::nvrtc::sys::nvrtcResult::NVRTC_SUCCESS {
        return None;
    }
    Some(Nvrtc {
        path,
        version: (major, minor),
    })
}

/// Where CUDA's libraries are looked for, in order: NVRTC here, cuBLAS in `device::vendor`.
pub(crate) fn library_dirs() -> Vec<PathBuf> {
    let mut dirs = Vec::new();
    if let Some(paths) = std::env::var_os("LD_LIBRARY_PATH") {
        dirs.extend(std::env::split_paths(&paths));
    }
    if let Some(cuda) = std::env::var_os("CUDA_PATH") {
        let cuda = PathBuf::from(cuda);
        dirs.extend([cuda.join("lib64"), cuda.join("lib")]);
    }
    dirs.push(PathBuf::from("/usr/local/cuda/lib64"));
    dirs.extend(
        python_site_dirs()
            .into_iter()
            .map(|site| site.join("nvidia/cu13/lib")),
    );
    dirs
}

/// The site-packages directories of `python3`, where pip puts the NVRTC wheel.
fn python_site_dirs() -> Vec<PathBuf> {
    let script = "import site, sys; print('\\n'.join(site.getsitepackages() + [site.getusersitepackages()]))";
    let Ok(output) = Command::new("python3").args(["-c", script]).output() else {
        return Vec::new();
    };
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter(|line| !line.is_empty())
        .map(PathBuf::from)
        .collect()
}

/// Opens libnvrtc-builtins and libnvrtc from `dir` and keeps them loaded for the process.
fn preload_from(dir: &Path) -> Option<PathBuf> {
    let library = ["libnvrtc.so.13", "libnvrtc.so"]
        .iter()
        .map(|name| dir.join(name))
        .find(|path| path.is_file())?;
    // libnvrtc dlopens its builtins by soname at compile time; loading them first by full
    // path lets that lookup succeed when `dir` is not on the loader's path.
    if let Ok(entries) = std::fs::read_dir(dir) {
        for entry in entries.flatten() {
            let name = entry.file_name();
            let name = name.to_string_lossy();
            if name.starts_with("libnvrtc-builtins.so") && !name.contains(".alt.") {
                // SAFETY: NVRTC's builtins library has no initialisers with preconditions.
                if let Ok(lib) = unsafe { libloading::Library::new(entry.path()) } {
                    std::mem::forget(lib);
                }
            }
        }
    }
    // SAFETY: as above; the handle is leaked on purpose so the library stays mapped.
    let lib = unsafe { libloading::Library::new(&library) }.ok()?;
    std::mem::forget(lib);
    Some(library)
}

/// Compiles one kernel file to PTX for `arch` with line info, under its repository path so
/// that NVRTC's errors and the PTX's `.file` name `kernels/…cu`.
pub fn compile(path: &str, source: &str, arch: &str) -> Result<String> {
    require_nvrtc()?;
    let options = CompileOptions {
        name: Some(path.to_string()),
        options: vec![
            format!("--gpu-architecture={arch}"),
            "-lineinfo".to_string(),
        ],
        ..Default::default()
    };
    match cudarc::nvrtc::compile_ptx_with_opts(source, options) {
        Ok(ptx) => Ok(normalize_file_directives(&ptx.to_src(), path)),
        Err(CompileError::CompileError { log, .. }) => Err(HarnessError::Compile {
            path: path.to_string(),
            log: normalize_log(&log.to_string_lossy(), path),
        }),
        Err(other) => Err(HarnessError::Compile {
            path: path.to_string(),
            log: other.to_string(),
        }),
    }
}

/// NVRTC writes the absolute path of the working directory into `.file`; the committed PTX
/// must not depend on where it was generated.
pub fn normalize_file_directives(ptx: &str, path: &str) -> String {
    let mut out = String::with_capacity(ptx.len());
    for line in ptx.split_inclusive('\n') {
        let trimmed = line.trim_start();
        if trimmed.starts_with(".file")
            && let (Some(open), Some(close)) = (line.find('"'), line.rfind('"'))
            && open < close
            && line[open + 1..close].ends_with(path)
        {
            out.push_str(&line[..open + 1]);
            out.push_str(path);
            out.push_str(&line[close..]);
            continue;
        }
        out.push_str(line);
    }
    out
}

/// Rewrites NVRTC's `/abs/kernels/x.cu(12): error` into `kernels/x.cu:12: error`, the form
/// editors and terminals turn into links.
pub fn normalize_log(log: &str, path: &str) -> String {
    let mut lines = Vec::new();
    for line in log.lines() {
        let mut line = line.to_string();
        if let Some(at) = line.find(path) {
            // Drop the directory NVRTC put in front of the path, wherever the path appears.
            let token_start = line[..at]
                .rfind([' ', '"', '\''])
                .map_or(0, |quote| quote + 1);
            line.replace_range(token_start..at, "");
            let rest = &line[token_start + path.len()..];
            if token_start == 0
                && let Some(stripped) = rest.strip_prefix('(')
                && let Some(close) = stripped.find(')')
                && stripped[..close].chars().all(|c| c.is_ascii_digit())
            {
                let number = stripped[..close].to_string();
                let after = stripped[close + 1..].to_string();
                line = format!("{path}:{number}{after}");
            }
        }
        lines.push(line);
    }
    while lines.last().is_some_and(|line| line.trim().is_empty()) {
        lines.pop();
    }
    lines.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_directive_loses_the_machine_prefix() {
        let ptx = "\tret;\n\t.file\t1 \"/home/me/racetrack/kernels/ch4/a.cu\"\n";
        assert_eq!(
            normalize_file_directives(ptx, "kernels/ch4/a.cu"),
            "\tret;\n\t.file\t1 \"kernels/ch4/a.cu\"\n"
        );
        let unrelated = "\t.file\t2 \"/usr/include/other.h\"\n";
        assert_eq!(
            normalize_file_directives(unrelated, "kernels/ch4/a.cu"),
            unrelated
        );
    }

    #[test]
    fn log_lines_become_path_colon_line() {
        let log = "/tmp/x/kernels/ch6/07.cu(12): error: identifier \"tid\" is undefined\n\n1 error detected in the compilation of \"/tmp/x/kernels/ch6/07.cu\".\n\n";
        assert_eq!(
            normalize_log(log, "kernels/ch6/07.cu"),
            "kernels/ch6/07.cu:12: error: identifier \"tid\" is undefined\n\n1 error detected in the compilation of \"kernels/ch6/07.cu\"."
        );
    }
}
