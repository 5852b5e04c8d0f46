//! Finding, loading and calling NVRTC, the CUDA runtime compiler.
//!
//! cudarc opens libnvrtc by name only, which finds it on the loader's path. Learners more
//! often have it from `pip install nvidia-cuda-nvrtc` or under `CUDA_PATH`, so we open it by
//! full path first: the dynamic loader then hands cudarc the same library when it asks by soname.

use std::ffi::{CStr, CString, c_char, c_int};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use cudarc::nvrtc::sys::{self, nvrtcProgram, nvrtcResult};

pub use crate::compile_cache::Served;
use crate::compile_cache::{CompileCache, Compiler, Inputs, Outcome};
use crate::error::{HarnessError, Result};
use crate::provision::{self, Piece};
use crate::timings::{self, Phase, Timer};

/// The NVRTC every committed PTX file is generated with. Driver 580 loads its PTX ISA 9.0;
/// newer NVRTCs emit PTX that driver refuses.
pub const PINNED_NVRTC: &str = "nvidia-cuda-nvrtc==13.0.88";
/// The CUDA headers of the same release (`cuda_fp16.h`, `cooperative_groups.h`, …), for
/// learners' own files; installs into the same `nvidia/cu13` folder as NVRTC.
pub const PINNED_RUNTIME: &str = "nvidia-cuda-runtime==13.0.96";
/// CCCL (libcu++, CUB), which `cooperative_groups.h` includes (`<nv/target>`, `<cuda/atomic>`).
pub const PINNED_CCCL: &str = "nvidia-cuda-cccl==13.0.85";
/// nvcc of the same release, for `racetrack run`'s whole programs: the driver and its tools
/// (`ptxas`, `nvlink`, `fatbinary`, `cudafe++`) …
pub const PINNED_NVCC: &str = "nvidia-cuda-nvcc==13.0.88";
/// … `cicc` and libNVVM, which nvcc runs for device code …
pub const PINNED_NVVM: &str = "nvidia-nvvm==13.0.88";
/// … and the `crt/` headers every translation unit includes, which nvcc's wheel leaves out.
pub const PINNED_CRT: &str = "nvidia-cuda-crt==13.0.88";
/// `cuda_profiler_api.h` (`cudaProfilerStart`), which NVIDIA's samples include.
pub const PINNED_PROFILER_API: &str = "nvidia-cuda-profiler-api==13.0.85";
/// NVTX's headers (`nvtx3/nvToolsExt.h`), which programs that mark ranges for a profiler include.
pub const PINNED_NVTX: &str = "nvidia-nvtx==13.0.85";
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

/// NVRTC where it was already installed (a toolkit, pip's site-packages, Racetrack's cache),
/// located and loaded once per process; `None` when it is nowhere. Never fetches anything:
/// code that must compile calls [`require_nvrtc`].
pub fn nvrtc() -> Option<&'static Nvrtc> {
    if let Some(Ok(fetched)) = FETCHED.get() {
        return Some(fetched);
    }
    FOUND
        .get_or_init(|| timings::time(Phase::FindNvrtc, || load(&library_dirs())))
        .as_ref()
}

static FOUND: OnceLock<Option<Nvrtc>> = OnceLock::new();
static FETCHED: OnceLock<std::result::Result<Nvrtc, String>> = OnceLock::new();

/// NVRTC, fetched into Racetrack's cache (see [`provision`]) when it is not installed: what
/// everything that compiles CUDA calls. The error is one sentence with the command to run.
pub fn require_nvrtc() -> Result<&'static Nvrtc> {
    if let Some(found) = nvrtc() {
        return Ok(found);
    }
    FETCHED
        .get_or_init(|| {
            let root = provision::fetch(Piece::Nvrtc, &searched_places())
                .map_err(|error| error.to_string())?;
            let dir = root.join("nvidia/cu13/lib");
            load(std::slice::from_ref(&dir)).ok_or_else(|| {
                format!(
                    "NVRTC was fetched into {} but does not load; remove that folder and run again",
                    provision::display_path(&root)
                )
            })
        })
        .as_ref()
        .map_err(|reason| HarnessError::NoNvrtc(reason.clone()))
}

/// The places NVRTC and the headers are looked for, as the error sentences list them.
pub fn searched_places() -> String {
    let cache = provision::cache_root()
        .map(|root| {
            format!(
                " and Racetrack's cache ({})",
                provision::display_path(&root)
            )
        })
        .unwrap_or_default();
    format!(
        "LD_LIBRARY_PATH, CUDA_PATH, /usr/local/cuda, python3's site-packages (nvidia/cu13){cache}"
    )
}

fn load(dirs: &[PathBuf]) -> Option<Nvrtc> {
    let path = dirs.iter().find_map(|dir| preload_from(dir));
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
/// Racetrack's own cache comes last: whatever the user installed wins.
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
            .iter()
            .map(|site| site.join("nvidia/cu13/lib")),
    );
    dirs.extend(provision::library_dirs());
    dirs
}

/// The first of [`library_dirs`] that holds `file` (`libcublas.so.13`), as a full path.
pub(crate) fn find_library(file: &str) -> Option<PathBuf> {
    library_dirs()
        .into_iter()
        .map(|dir| dir.join(file))
        .find(|path| path.is_file())
}

/// NCCL's library: where NVRTC is looked for, then in a pip-installed `nvidia/nccl/lib`
/// (NCCL's wheel keeps it apart from the `cu13` pieces).
pub(crate) fn find_nccl() -> Option<PathBuf> {
    library_dirs()
        .into_iter()
        .chain(
            python_site_dirs()
                .iter()
                .map(|site| site.join("nvidia/nccl/lib")),
        )
        .map(|dir| dir.join("libnccl.so.2"))
        .find(|path| path.is_file())
}

/// Where the CUDA headers are, searched as NVRTC itself is found: beside each library
/// directory of [`library_dirs`] (`…/lib64` → `…/include`), in the order NVRTC is looked for,
/// each with the `cccl/` folder that CUDA 13 keeps libcu++ and CUB in, as nvcc adds it.
/// Only folders that exist; never fetches (see [`require_cuda_headers`]).
pub fn cuda_include_dirs() -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = Vec::new();
    for lib in library_dirs() {
        let Some(root) = lib.parent() else { continue };
        let include = root.join("include");
        for dir in [include.clone(), include.join("cccl")] {
            if dir.is_dir() && !dirs.contains(&dir) {
                dirs.push(dir);
            }
        }
    }
    dirs
}

/// Whether `dirs` hold CUDA's headers and CCCL's, which `cooperative_groups.h` includes.
pub fn has_cuda_headers(dirs: &[PathBuf]) -> bool {
    dirs.iter()
        .any(|dir| dir.join("cooperative_groups.h").is_file())
        && dirs.iter().any(|dir| dir.join("nv/target").is_file())
}

/// [`cuda_include_dirs`], with CUDA's headers fetched into Racetrack's cache first when no
/// folder has them.
pub fn require_cuda_headers() -> Result<Vec<PathBuf>> {
    let dirs = cuda_include_dirs();
    if has_cuda_headers(&dirs) {
        return Ok(dirs);
    }
    static FETCHED_HEADERS: OnceLock<std::result::Result<(), String>> = OnceLock::new();
    FETCHED_HEADERS
        .get_or_init(|| {
            provision::fetch(Piece::Headers, &searched_places())
                .map(|_| ())
                .map_err(|error| error.to_string())
        })
        .clone()
        .map_err(HarnessError::NoCudaHeaders)?;
    Ok(cuda_include_dirs())
}

/// The site-packages directories of `python3`, where pip puts the NVRTC wheel: asked once per
/// process, and remembered across runs while the environment stays the same (see
/// [`crate::python_sites`]).
pub(crate) fn python_site_dirs() -> &'static [PathBuf] {
    static DIRS: OnceLock<Vec<PathBuf>> = OnceLock::new();
    DIRS.get_or_init(|| timings::time(Phase::FindNvrtc, crate::python_sites::site_dirs))
}

/// The NVRTC library in `dir`, by the names [`preload_from`] loads it by.
fn library_in(dir: &Path) -> Option<PathBuf> {
    ["libnvrtc.so.13", "libnvrtc.so"]
        .iter()
        .map(|name| dir.join(name))
        .find(|path| path.is_file())
}

/// NVRTC as the compile cache's key names it, told without loading it where that can be done:
/// the NVRTC already loaded, else the library file [`nvrtc`] would load first (the first of
/// [`library_dirs`] that holds one); `None` where no folder holds one, and only loading can tell.
fn unloaded_compiler() -> Option<Compiler> {
    if let Some(found) = FETCHED
        .get()
        .and_then(|fetched| fetched.as_ref().ok())
        .or_else(|| FOUND.get().and_then(Option::as_ref))
    {
        return Some(compiler_of(found));
    }
    static LIBRARY: OnceLock<Option<PathBuf>> = OnceLock::new();
    LIBRARY
        .get_or_init(|| {
            timings::time(Phase::FindNvrtc, || {
                library_dirs().iter().find_map(|dir| library_in(dir))
            })
        })
        .clone()
        .map(Compiler::Library)
}

fn compiler_of(found: &Nvrtc) -> Compiler {
    match &found.path {
        Some(library) => Compiler::Library(library.clone()),
        None => Compiler::ByName {
            version: found.version,
        },
    }
}

/// Opens libnvrtc-builtins and libnvrtc from `dir` and keeps them loaded for the process.
fn preload_from(dir: &Path) -> Option<PathBuf> {
    let library = library_in(dir)?;
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
    compile_with(path, source, arch, &Extras::default()).map(|compiled| compiled.ptx)
}

/// What a learner's own file may need beyond the project's kernels, which need none of it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Extras {
    /// More NVRTC options, e.g. `-I…`, `-DNAME=1`, `-std=c++20`.
    pub options: Vec<String>,
    /// Headers NVRTC takes from memory rather than a folder: (name as included, contents).
    pub headers: Vec<(String, String)>,
    /// C++ names whose kernels NVRTC must emit and tell the mangled names of, e.g.
    /// `reduce<float, 256>` (which also instantiates the template).
    pub name_expressions: Vec<String>,
}

/// PTX and, for each of [`Extras::name_expressions`] in order, its mangled (lowered) name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Compiled {
    pub ptx: String,
    pub lowered_names: Vec<String>,
}

/// [`compile`] with `extras`: more options, in-memory headers and name expressions.
///
/// What NVRTC makes of an unchanged file is kept in the compile cache
/// ([`crate::compile_cache`]): compiling it again reads the entry and skips NVRTC. The cache
/// never makes a compile fail; on any trouble with it, NVRTC compiles as if it were not there.
pub fn compile_with(path: &str, source: &str, arch: &str, extras: &Extras) -> Result<Compiled> {
    compile_in(
        CompileCache::for_user().as_ref(),
        path,
        source,
        arch,
        extras,
    )
    .map(|(compiled, _)| compiled)
}

/// [`compile_with`] through `cache` (none: NVRTC every time), and whether the cache answered.
pub fn compile_in(
    cache: Option<&CompileCache>,
    path: &str,
    source: &str,
    arch: &str,
    extras: &Extras,
) -> Result<(Compiled, Served)> {
    let mut timer = Timer::start(Phase::Compile);
    let options = options_for(arch, extras);
    let run = || run_nvrtc(path, source, &options, extras);
    let (outcome, served) = match cache {
        Some(cache) => {
            let key_of = |compiler: &Compiler| {
                cache.key(&Inputs {
                    compiler,
                    path,
                    source,
                    options: &options,
                    headers: &extras.headers,
                    name_expressions: &extras.name_expressions,
                })
            };
            // A hit needs NVRTC's library file, not NVRTC: the key names the file, and
            // NVRTC is loaded (or fetched) only when it must compile.
            let unloaded =
                unloaded_compiler().and_then(|compiler| Some((key_of(&compiler).ok()?, compiler)));
            let hit = unloaded
                .as_ref()
                .and_then(|(key, _)| cache.get(key).ok().flatten());
            match hit {
                Some(outcome) => (Ok(outcome), Served::Hit),
                None => {
                    let compiler = compiler_of(require_nvrtc()?);
                    let key = match unloaded {
                        Some((key, named)) if named == compiler => Ok(key),
                        _ => key_of(&compiler),
                    };
                    match key {
                        Ok(key) => cache.compile_keyed(&key, run),
                        Err(_) => (run(), Served::Compiled),
                    }
                }
            }
        }
        None => {
            require_nvrtc()?;
            (run(), Served::Compiled)
        }
    };
    timer.note(match (cache, served) {
        (None, _) => "NVRTC, compile cache off",
        (Some(_), Served::Hit) => "from the compile cache",
        (Some(_), Served::Stored) => "NVRTC, kept in the compile cache",
        (Some(_), Served::Compiled) => "NVRTC, not cached",
    });
    Ok((finish(outcome?, path)?, served))
}

/// [`compile_with`] by NVRTC itself, past the compile cache: what `racetrack ptx` regenerates
/// and checks `kernels/ptx/` with, so that the reference never depends on an earlier run.
pub fn compile_uncached(path: &str, source: &str, arch: &str, extras: &Extras) -> Result<Compiled> {
    let _timer = Timer::start(Phase::Compile);
    require_nvrtc()?;
    finish(
        run_nvrtc(path, source, &options_for(arch, extras), extras)?,
        path,
    )
}

/// NVRTC's options: the architecture, line info, then the extras' own.
fn options_for(arch: &str, extras: &Extras) -> Vec<String> {
    let mut options = vec![
        format!("--gpu-architecture={arch}"),
        "-lineinfo".to_string(),
    ];
    options.extend(extras.options.iter().cloned());
    options
}

fn finish(outcome: Outcome, path: &str) -> Result<Compiled> {
    match outcome {
        Outcome::Compiled(compiled) => Ok(compiled),
        Outcome::Refused { log } => Err(HarnessError::Compile {
            path: path.to_string(),
            log,
        }),
    }
}

/// One NVRTC compile. A program NVRTC refuses is an [`Outcome`] (its log is what that source
/// always gets, so the cache keeps it); failing to create the program, to take a name or to
/// hand back the PTX is an error, never kept.
fn run_nvrtc(path: &str, source: &str, options: &[String], extras: &Extras) -> Result<Outcome> {
    let fail = |log: String| HarnessError::Compile {
        path: path.to_string(),
        log,
    };
    let program = NvrtcProgram::create(path, source, &extras.headers).map_err(fail)?;
    for expression in &extras.name_expressions {
        program.add_name_expression(expression).map_err(fail)?;
    }
    if let Err(status) = program.compile(options) {
        let log = program.log();
        if log.trim().is_empty() {
            return Err(fail(format!("NVRTC failed ({status:?}) and wrote no log")));
        }
        let log = normalize_log(&log, path);
        if status == nvrtcResult::NVRTC_ERROR_COMPILATION {
            return Ok(Outcome::Refused { log });
        }
        return Err(fail(log));
    }
    let ptx = program.ptx().map_err(fail)?;
    let lowered_names = extras
        .name_expressions
        .iter()
        .map(|expression| program.lowered_name(expression))
        .collect::<Result<Vec<_>, String>>()
        .map_err(fail)?;
    Ok(Outcome::Compiled(Compiled {
        ptx: normalize_file_directives(&ptx, path),
        lowered_names,
    }))
}

/// An `nvrtcProgram` and the C strings it may point into, destroyed on drop.
struct NvrtcProgram {
    program: nvrtcProgram,
    _strings: Vec<CString>,
}

fn c_string(text: &str, what: &str) -> Result<CString, String> {
    CString::new(text).map_err(|_| format!("{what} contains a NUL byte, which NVRTC cannot take"))
}

fn check(status: nvrtcResult, what: &str) -> Result<(), String> {
    if status == nvrtcResult::NVRTC_SUCCESS {
        Ok(())
    } else {
        Err(format!("NVRTC could not {what} ({status:?})"))
    }
}

impl NvrtcProgram {
    fn create(path: &str, source: &str, headers: &[(String, String)]) -> Result<Self, String> {
        let source = c_string(source, "the source")?;
        let name = c_string(path, "the file name")?;
        let mut contents = Vec::with_capacity(headers.len());
        let mut names = Vec::with_capacity(headers.len());
        for (header, text) in headers {
            names.push(c_string(header, "a header name")?);
            contents.push(c_string(text, "a header")?);
        }
        let content_ptrs: Vec<*const c_char> = contents.iter().map(|c| c.as_ptr()).collect();
        let name_ptrs: Vec<*const c_char> = names.iter().map(|c| c.as_ptr()).collect();
        let count = c_int::try_from(headers.len()).map_err(|_| "too many headers".to_string())?;
        let mut program: nvrtcProgram = std::ptr::null_mut();
        // SAFETY: every pointer is to a NUL-terminated string kept alive in `_strings` for as
        // long as the program exists; the two arrays have `count` entries each.
        let status = unsafe {
            sys::nvrtcCreateProgram(
                &mut program,
                source.as_ptr(),
                name.as_ptr(),
                count,
                content_ptrs.as_ptr(),
                name_ptrs.as_ptr(),
            )
        };
        check(status, "create a program")?;
        let mut strings = vec![source, name];
        strings.extend(contents);
        strings.extend(names);
        Ok(Self {
            program,
            _strings: strings,
        })
    }

    fn add_name_expression(&self, expression: &str) -> Result<(), String> {
        let text = c_string(expression, "the kernel name")?;
        // SAFETY: a live program; NVRTC copies the expression.
        let status = unsafe { sys::nvrtcAddNameExpression(self.program, text.as_ptr()) };
        check(status, &format!("take the name `{expression}`"))
    }

    fn compile(&self, options: &[String]) -> Result<(), nvrtcResult> {
        let options: Vec<CString> = options
            .iter()
            .filter_map(|option| CString::new(option.as_str()).ok())
            .collect();
        let pointers: Vec<*const c_char> = options.iter().map(|o| o.as_ptr()).collect();
        let count = c_int::try_from(pointers.len()).unwrap_or(c_int::MAX);
        // SAFETY: a live program and `count` NUL-terminated options that outlive the call.
        let status = unsafe { sys::nvrtcCompileProgram(self.program, count, pointers.as_ptr()) };
        if status == nvrtcResult::NVRTC_SUCCESS {
            Ok(())
        } else {
            Err(status)
        }
    }

    fn log(&self) -> String {
        let mut size = 0usize;
        // SAFETY: a live program; the buffer has the size NVRTC asked for.
        unsafe {
            if sys::nvrtcGetProgramLogSize(self.program, &mut size) != nvrtcResult::NVRTC_SUCCESS {
                return String::new();
            }
            let mut buffer = vec![0 as c_char; size.max(1)];
            if sys::nvrtcGetProgramLog(self.program, buffer.as_mut_ptr())
                != nvrtcResult::NVRTC_SUCCESS
            {
                return String::new();
            }
            CStr::from_ptr(buffer.as_ptr())
                .to_string_lossy()
                .into_owned()
        }
    }

    fn ptx(&self) -> Result<String, String> {
        let mut size = 0usize;
        // SAFETY: a compiled program; the buffer has the size NVRTC asked for.
        unsafe {
            check(
                sys::nvrtcGetPTXSize(self.program, &mut size),
                "size the PTX",
            )?;
            let mut buffer = vec![0 as c_char; size.max(1)];
            check(
                sys::nvrtcGetPTX(self.program, buffer.as_mut_ptr()),
                "copy the PTX",
            )?;
            Ok(CStr::from_ptr(buffer.as_ptr())
                .to_string_lossy()
                .into_owned())
        }
    }

    fn lowered_name(&self, expression: &str) -> Result<String, String> {
        let text = c_string(expression, "the kernel name")?;
        let mut lowered: *const c_char = std::ptr::null();
        // SAFETY: a compiled program to which `expression` was added; NVRTC owns the result,
        // which lives as long as the program and is copied out at once.
        unsafe {
            check(
                sys::nvrtcGetLoweredName(self.program, text.as_ptr(), &mut lowered),
                &format!("lower the name `{expression}`"),
            )?;
            if lowered.is_null() {
                return Err(format!("NVRTC gave no lowered name for `{expression}`"));
            }
            Ok(CStr::from_ptr(lowered).to_string_lossy().into_owned())
        }
    }
}

impl Drop for NvrtcProgram {
    fn drop(&mut self) {
        // SAFETY: created by nvrtcCreateProgram and destroyed once, here.
        unsafe {
            sys::nvrtcDestroyProgram(&mut self.program);
        }
    }
}

/// NVRTC writes the absolute path of the working directory into `.file`; the committed PTX
/// must not depend on where it was generated, and reports name files as the user does. The
/// file's own headers (`#include "kernel.cu"` beside it) get the same prefix: it goes too, so
/// that they read `kernel.cu:33` rather than a machine's path.
pub fn normalize_file_directives(ptx: &str, path: &str) -> String {
    let quoted = |line: &str| {
        let trimmed = line.trim_start();
        let (open, close) = (line.find('"')?, line.rfind('"')?);
        (trimmed.starts_with(".file") && open < close).then_some((open, close))
    };
    // What NVRTC put in front of `path` (the working directory, as it saw it), or, when it
    // wrote `path` as given, the working directory it resolves the headers in.
    let prefix = ptx
        .split_inclusive('\n')
        .find_map(|line| {
            let (open, close) = quoted(line)?;
            let file = &line[open + 1..close];
            let prefix = file.strip_suffix(path)?;
            (prefix.ends_with('/') && prefix.len() > 1).then(|| prefix.to_string())
        })
        .or_else(|| {
            let dir = std::env::current_dir().ok()?;
            Some(format!("{}/", dir.to_str()?.trim_end_matches('/')))
        });
    let mut out = String::with_capacity(ptx.len());
    for line in ptx.split_inclusive('\n') {
        if let Some((open, close)) = quoted(line) {
            let file = &line[open + 1..close];
            let relative = if file.ends_with(path) {
                Some(path)
            } else {
                prefix
                    .as_deref()
                    .and_then(|prefix| file.strip_prefix(prefix))
            };
            if let Some(relative) = relative {
                out.push_str(&line[..open + 1]);
                out.push_str(relative);
                out.push_str(&line[close..]);
                continue;
            }
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

    /// CI proves the fresh-machine path: it installs no NVIDIA wheel itself, so every test that
    /// compiles gets NVRTC, the headers and nvcc through [`provision`]; the README names the
    /// pins for those who install them by hand.
    #[test]
    fn ci_leaves_the_pinned_wheels_to_racetrack_and_the_readme_names_them() {
        let ci = include_str!("../../.ci/run");
        let readme = include_str!("../../README.md");
        for pin in [
            PINNED_NVRTC,
            PINNED_RUNTIME,
            PINNED_CCCL,
            PINNED_NVCC,
            PINNED_NVVM,
            PINNED_CRT,
            PINNED_PROFILER_API,
            PINNED_NVTX,
        ] {
            let (name, version) = pin.split_once("==").unwrap_or((pin, ""));
            assert!(!ci.contains(name), ".ci/run installs {name} itself");
            assert!(
                readme.contains(pin) || (readme.contains(name) && readme.contains(version)),
                "README.md does not name {pin}"
            );
        }
        assert!(
            ci.contains("XDG_CACHE_HOME"),
            ".ci/run must start from an empty cache"
        );
        for piece in [Piece::Nvrtc, Piece::Headers, Piece::Nvcc] {
            assert!(
                ci.contains(&piece.folder_name()),
                ".ci/run does not check that {} was fetched",
                piece.folder_name()
            );
        }
    }

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
        let with_own_header = "\t.file\t1 \"/home/me/bfs/bfs.cu\"\n\t.file\t2 \"/home/me/bfs/kernel.cu\"\n\t.file\t3 \"/usr/include/cuda/x.h\"\n";
        assert_eq!(
            normalize_file_directives(with_own_header, "bfs.cu"),
            "\t.file\t1 \"bfs.cu\"\n\t.file\t2 \"kernel.cu\"\n\t.file\t3 \"/usr/include/cuda/x.h\"\n"
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
