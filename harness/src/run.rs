//! `racetrack run`: a whole CUDA program, its own `main` included, built by nvcc and run on the
//! emulator through Racetrack's own CUDA runtime (`cudart/`), every launch checked; or run with
//! NVIDIA's runtime on a GPU (`--backend cuda`), built the same way, for the comparison.
//!
//! Two forms: from source (`racetrack run [nvcc's flags] FILES… -- ARGS`, the program's build
//! line with `nvcc … -o prog` replaced) and a binary built by `nvcc -cudart shared`
//! (`racetrack run ./prog ARGS`). The program keeps its stdout, stderr and exit code; Racetrack's
//! own lines go to stderr, each marked, or only to `--log-file`.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus};

use crate::backend::BackendChoice;
use crate::build_deps::{Dependencies, parse_make_rule};
use crate::error::{HarnessError, Result};

/// What `racetrack run` was asked, parsed from its command line.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RunRequest {
    pub backend: Option<BackendChoice>,
    pub log_file: Option<PathBuf>,
    pub json: Option<PathBuf>,
    pub error_exitcode: Option<u8>,
    pub schedule: Option<String>,
    pub devices: Option<u32>,
    pub threads: Option<u32>,
    /// Thread-instructions a launch may run before it is stopped.
    pub step_budget: Option<u64>,
    /// `--engine`: passed on to the emulator as `RACETRACK_ENGINE`.
    pub engine: Option<ptx_emu::Engine>,
    pub checks_off: Vec<String>,
    /// `--timings`: the runtime adds up each kernel's launches and says where the time went
    /// when the program ends.
    pub timings: bool,
    /// Only build, then say where the program is.
    pub build_only: bool,
    pub program: Program,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Program {
    Source {
        /// nvcc's flags that build the program (`-I`, `-D`, `-std=`, `-O`, `-Xcompiler`, `-l`…).
        flags: Vec<String>,
        files: Vec<PathBuf>,
        /// Flags that choose GPU architectures or outputs, noted and left out.
        ignored: Vec<String>,
        args: Vec<String>,
    },
    Binary {
        path: PathBuf,
        args: Vec<String>,
    },
}

impl Default for Program {
    fn default() -> Self {
        Program::Binary {
            path: PathBuf::new(),
            args: Vec::new(),
        }
    }
}

pub const HELP: &str = "\
Racetrack's options come first or anywhere before `--`:
  --backend auto|emu|cuda   emu: Racetrack's runtime and the emulator (the default without a GPU);
                            cuda: NVIDIA's runtime on the GPU, built the same way
  --log-file FILE           Racetrack's lines go only to FILE (the program's stderr stays its own)
  --json FILE               the findings as JSON (`-` for stdout)
  --error-exitcode N        exit with N when a checker reported (else the program's own code)
  --schedule NAME[:SEED]    hardware (default), random:SEED, adversarial:SEED, lanes:SEED
  --devices N               how many GPUs the emulated machine has (default 1)
  --threads N               the emulator's cores (default all)
  --step-budget N           thread-instructions a launch may run before it is stopped as a hang
                            (default 10000000000; a long benchmark kernel may need more)
  --engine NAME             interp, compiled or auto (default): the emulator's engine
  --checks-off LIST         leave checkers off: race,sync,mem,init
  --timings                 when the program ends, each kernel's launches, thread-instructions
                            and time on the emulator
  --build-only              build, say where the program is, and stop

From source, nvcc's flags as the program's build line has them: -I DIR, -D NAME[=V], -std=c++17,
-O2, -g, -lineinfo, -Xcompiler ARG, -l LIB, -L DIR, several .cu/.cpp/.c files. -arch, -gencode,
-code and -o are noted and left out: Racetrack builds PTX for the emulated sm_90. The program's
arguments go after `--`.

A binary must have been built by `nvcc -cudart shared` (nvcc's default links NVIDIA's runtime
into the program, where Racetrack cannot take its place).";

fn bad(message: impl Into<String>) -> HarnessError {
    HarnessError::Run(message.into())
}

const SOURCE_SUFFIXES: &[&str] = &["cu", "cpp", "cc", "cxx", "c", "o", "a", "so"];

/// Parses what follows `racetrack run`.
pub fn parse(raw: &[OsString]) -> Result<RunRequest> {
    let mut request = RunRequest::default();
    let mut args: Vec<String> = Vec::new();
    for a in raw {
        args.push(
            a.to_str()
                .ok_or_else(|| bad(format!("{} is not UTF-8", a.to_string_lossy())))?
                .to_string(),
        );
    }
    let split = args.iter().position(|a| a == "--");
    let (before, after): (Vec<String>, Vec<String>) = match split {
        Some(i) => (args[..i].to_vec(), args[i + 1..].to_vec()),
        None => (args.clone(), Vec::new()),
    };
    let mut rest = Vec::new();
    let mut i = 0;
    let value = |i: &mut usize, name: &str, inline: Option<&str>| -> Result<String> {
        if let Some(v) = inline {
            return Ok(v.to_string());
        }
        *i += 1;
        before
            .get(*i)
            .cloned()
            .ok_or_else(|| bad(format!("{name} needs a value")))
    };
    let mut binary: Option<(PathBuf, Vec<String>)> = None;
    while i < before.len() {
        let arg = &before[i];
        let (name, inline) = match arg.split_once('=') {
            Some((n, v)) if n.starts_with("--") => (n, Some(v)),
            _ => (arg.as_str(), None),
        };
        match name {
            "--backend" => {
                let v = value(&mut i, name, inline)?;
                request.backend = Some(match v.as_str() {
                    "auto" => BackendChoice::Auto,
                    "emu" => BackendChoice::Emu,
                    "cuda" => BackendChoice::Cuda,
                    _ => return Err(bad(format!("--backend {v}: choose auto, emu or cuda"))),
                });
            }
            "--log-file" => request.log_file = Some(value(&mut i, name, inline)?.into()),
            "--json" => request.json = Some(value(&mut i, name, inline)?.into()),
            "--error-exitcode" => {
                let v = value(&mut i, name, inline)?;
                request.error_exitcode = Some(v.parse().map_err(|_| {
                    bad(format!("--error-exitcode {v}: give a number from 0 to 255"))
                })?);
            }
            "--schedule" => {
                let v = value(&mut i, name, inline)?;
                let kind = v.split(':').next().unwrap_or("");
                if !["hardware", "random", "adversarial", "lanes"].contains(&kind) {
                    return Err(bad(format!(
                        "--schedule {v}: choose hardware, random:SEED, adversarial:SEED or lanes:SEED"
                    )));
                }
                request.schedule = Some(v);
            }
            "--devices" => {
                let v = value(&mut i, name, inline)?;
                request.devices = Some(
                    v.parse()
                        .ok()
                        .filter(|n| (1..=64).contains(n))
                        .ok_or_else(|| bad(format!("--devices {v}: give a number from 1 to 64")))?,
                );
            }
            "--threads" => {
                let v = value(&mut i, name, inline)?;
                request.threads = Some(
                    v.parse()
                        .ok()
                        .filter(|&n| n >= 1)
                        .ok_or_else(|| bad(format!("--threads {v}: give a number from 1 up")))?,
                );
            }
            "--step-budget" => {
                let v = value(&mut i, name, inline)?;
                request.step_budget =
                    Some(v.parse().ok().filter(|&n| n >= 1).ok_or_else(|| {
                        bad(format!(
                            "--step-budget {v}: give a number of thread-instructions from 1 up"
                        ))
                    })?);
            }
            "--engine" => {
                let v = value(&mut i, name, inline)?;
                request.engine =
                    Some(ptx_emu::Engine::parse(&v).ok_or_else(|| {
                        bad(format!("--engine {v}: give interp, compiled or auto"))
                    })?);
            }
            "--checks-off" => {
                let v = value(&mut i, name, inline)?;
                for check in v.split(',') {
                    if !["race", "sync", "mem", "init"].contains(&check) {
                        return Err(bad(format!(
                            "--checks-off {check}: choose among race, sync, mem, init"
                        )));
                    }
                    request.checks_off.push(check.to_string());
                }
            }
            "--build-only" => request.build_only = true,
            "--timings" => request.timings = true,
            _ if rest.is_empty()
                && binary.is_none()
                && !arg.starts_with('-')
                && is_executable(Path::new(arg)) =>
            {
                // The binary form: everything after the program is its own.
                let mut program_args = before[i + 1..].to_vec();
                program_args.extend(after.iter().cloned());
                binary = Some((PathBuf::from(arg), program_args));
                break;
            }
            _ => rest.push(arg.clone()),
        }
        i += 1;
    }
    if let Some((path, args)) = binary {
        request.program = Program::Binary { path, args };
        return Ok(request);
    }
    request.program = source_program(&rest, after)?;
    Ok(request)
}

fn is_executable(path: &Path) -> bool {
    let mut magic = [0u8; 4];
    std::fs::File::open(path)
        .and_then(|mut f| std::io::Read::read_exact(&mut f, &mut magic))
        .is_ok()
        && magic == *b"\x7fELF"
        && path
            .extension()
            .is_none_or(|e| e != "o" && e != "so" && e != "a")
}

/// nvcc flags that take their value as the next argument.
const FLAGS_WITH_VALUE: &[&str] = &[
    "-I",
    "-D",
    "-U",
    "-L",
    "-l",
    "-o",
    "-x",
    "-ccbin",
    "-Xcompiler",
    "-Xlinker",
    "-Xptxas",
    "-Xnvlink",
    "-Xfatbin",
    "-arch",
    "-code",
    "-gencode",
    "-include",
    "-isystem",
    "-maxrregcount",
    "--include-path",
    "--define-macro",
    "--library",
    "--library-path",
    "--output-file",
    "--compiler-options",
    "--linker-options",
    "--gpu-architecture",
    "--gpu-code",
    "--generate-code",
    "--compiler-bindir",
    "-std",
    "--std",
    "-rdc",
    "--relocatable-device-code",
    "-default-stream",
    "--default-stream",
    "-Xcudafe",
    "--maxrregcount",
];

/// Flags Racetrack makes its own choice for, noted and left out.
const IGNORED: &[&str] = &[
    "-o",
    "--output-file",
    "-arch",
    "--gpu-architecture",
    "-code",
    "--gpu-code",
    "-gencode",
    "--generate-code",
    "-cudart",
    "--cudart",
];

/// Libraries that reach a GPU through NVIDIA's driver, beyond the runtime API.
const GPU_LIBRARIES: &[&str] = &[
    "cublas", "cublasLt", "cufft", "curand", "cusparse", "cusolver", "nppc", "nvrtc", "cuda",
    "nvjpeg", "cudnn", "nccl",
];

fn source_program(rest: &[String], args: Vec<String>) -> Result<Program> {
    let (mut flags, mut files, mut ignored) = (Vec::new(), Vec::new(), Vec::new());
    let mut i = 0;
    while i < rest.len() {
        let arg = &rest[i];
        let (name, inline) = match arg.split_once('=') {
            Some((n, v)) if n.starts_with('-') => (n.to_string(), Some(v.to_string())),
            _ => (arg.clone(), None),
        };
        if arg.starts_with('-') {
            let takes_value = FLAGS_WITH_VALUE.contains(&name.as_str()) && inline.is_none();
            let value = if takes_value {
                i += 1;
                Some(
                    rest.get(i)
                        .cloned()
                        .ok_or_else(|| bad(format!("{name} needs a value")))?,
                )
            } else {
                inline.clone()
            };
            let library = if name == "-l" {
                value.clone()
            } else {
                arg.strip_prefix("-l")
                    .filter(|l| !l.is_empty() && !arg.starts_with("-lineinfo"))
                    .map(str::to_string)
            };
            if let Some(lib) = library.filter(|l| GPU_LIBRARIES.contains(&l.as_str())) {
                return Err(bad(format!(
                    "-l{lib}: racetrack run runs the CUDA runtime API on its emulator, and lib{lib} reaches the GPU through NVIDIA's driver, which it does not emulate"
                )));
            }
            // `-rdc=true` builds and device-links the whole program in one step, which is what
            // racetrack run does; `-dc` and `-dlink` are the steps of a build done by hand.
            if ["-dc", "--device-c", "-dlink", "--device-link"].contains(&name.as_str()) {
                return Err(bad(format!(
                    "{arg}: racetrack run builds and links the whole program in one step; give -rdc=true and every source file instead"
                )));
            }
            if ["-c", "--compile", "-ptx", "-cubin", "-E", "-M"].contains(&name.as_str()) {
                return Err(bad(format!(
                    "{arg}: racetrack run builds and runs a whole program; leave {name} out"
                )));
            }
            let whole = match (&value, takes_value) {
                (Some(v), true) => vec![name.clone(), v.clone()],
                _ => vec![arg.clone()],
            };
            if IGNORED.contains(&name.as_str()) {
                ignored.push(whole.join(" "));
            } else {
                flags.extend(whole);
            }
        } else {
            let path = PathBuf::from(arg);
            let known = path
                .extension()
                .and_then(|e| e.to_str())
                .is_some_and(|e| SOURCE_SUFFIXES.contains(&e));
            if !known {
                return Err(bad(format!(
                    "{arg}: not a source file (.cu, .cpp, .c) nor a program built by nvcc; put the program's own arguments after --"
                )));
            }
            if !path.is_file() {
                return Err(bad(format!("{arg}: no such file")));
            }
            files.push(path);
        }
        i += 1;
    }
    if files.is_empty() {
        return Err(bad(
            "give the program's source files (racetrack run prog.cu -- ARGS) or a program built by nvcc -cudart shared (racetrack run ./prog ARGS)",
        ));
    }
    Ok(Program::Source {
        flags,
        files,
        ignored,
        args,
    })
}

/// What a run ended with.
#[derive(Debug)]
pub struct Outcome {
    pub status: ExitStatus,
    pub findings: Vec<serde_json::Value>,
}

/// The library the program loads in place of NVIDIA's runtime: built beside this binary
/// (`target/<profile>/deps/libcudart.so` for a dependency of the harness), or named by
/// `RACETRACK_CUDART`.
pub fn our_runtime() -> Result<PathBuf> {
    if let Some(path) = std::env::var_os("RACETRACK_CUDART") {
        return Ok(PathBuf::from(path));
    }
    let exe =
        std::env::current_exe().map_err(|e| bad(format!("cannot find racetrack itself: {e}")))?;
    let dir = exe.parent().unwrap_or(Path::new("."));
    let candidates = [
        dir.join("libcudart.so"),
        dir.join("deps/libcudart.so"),
        dir.join("../libcudart.so"),
        dir.join("../deps/libcudart.so"),
    ];
    // `cargo build -p racetrack-cudart` leaves one beside racetrack, a build of the harness one
    // in deps/: the newer is the one that matches the sources.
    candidates
        .into_iter()
        .filter_map(|p| Some((p.metadata().ok()?.modified().ok()?, p)))
        .max_by_key(|(modified, _)| *modified)
        .map(|(_, p)| p)
        .ok_or_else(|| {
        bad("Racetrack's CUDA runtime (libcudart.so) is not built beside racetrack: run `cargo build -p racetrack-cudart`")
    })
}

/// A folder holding `libcudart.so.13`, the name the program asks the loader for.
pub fn prepare_runtime_folder(library: &Path, work: &Path) -> Result<PathBuf> {
    let dir = work.join("cudart");
    std::fs::create_dir_all(&dir).map_err(|e| bad(format!("{}: {e}", dir.display())))?;
    let link = dir.join("libcudart.so.13");
    let target = library
        .canonicalize()
        .map_err(|e| bad(format!("{}: {e}", library.display())))?;
    if std::fs::read_link(&link).is_ok_and(|now| now == target) {
        return Ok(dir);
    }
    // Made aside and renamed over the old link: runs starting at once (tests in parallel)
    // never see the name missing, nor fail on each other's link.
    let fresh = dir.join(format!(
        "libcudart.so.13.{}.{:?}",
        std::process::id(),
        std::thread::current().id()
    ));
    let _ = std::fs::remove_file(&fresh);
    std::os::unix::fs::symlink(&target, &fresh)
        .and_then(|()| std::fs::rename(&fresh, &link))
        .map_err(|e| bad(format!("{}: {e}", link.display())))?;
    Ok(dir)
}

/// The flags every build gets: host debug lines (so reports name the host's lines), device
/// lines, and PTX for sm_90 that the emulator runs and a GPU's driver compiles.
pub const BUILD_FLAGS: &[&str] = &[
    "-cudart",
    "shared",
    "-g",
    "-lineinfo",
    "-gencode",
    "arch=compute_90,code=compute_90",
    "--no-compress",
];

/// Builds a program from source into `work`, or reuses the build of the same sources and flags
/// while every header it read is unchanged.
pub fn build(
    toolchain: &crate::nvcc::Toolchain,
    flags: &[String],
    files: &[PathBuf],
    work: &Path,
) -> Result<PathBuf> {
    // Relative paths name different files from different folders, and a build's debug lines
    // (what reports quote) are where its sources were: the folder is part of the key.
    let folder = std::env::current_dir().unwrap_or_default();
    let key = build_key(&toolchain.version, &folder, flags, files);
    let out = work.join(format!("prog-{key}"));
    let dependency_list = work.join(format!("prog-{key}.deps"));
    let recorded = std::fs::read_to_string(&dependency_list)
        .ok()
        .and_then(|text| Dependencies::from_text(&text));
    if out.is_file() && recorded.is_some_and(|deps| deps.unchanged()) {
        return Ok(out);
    }
    // Stamped before nvcc reads them: a header edited during the build fails the next check.
    let dependencies = read_by_build(toolchain, flags, files);
    let partial = work.join(format!("prog-{key}.partial-{}", std::process::id()));
    let mut command = toolchain.command();
    command
        .args(BUILD_FLAGS)
        .args(flags)
        .args(files)
        .arg("-o")
        .arg(&partial);
    let output = command
        .output()
        .map_err(|e| bad(format!("cannot run {}: {e}", toolchain.nvcc.display())))?;
    if !output.status.success() {
        let log = String::from_utf8_lossy(&output.stderr);
        return Err(HarnessError::Run(format!(
            "nvcc could not build the program:\n{}",
            log.trim_end()
        )));
    }
    std::fs::rename(&partial, &out).map_err(|e| bad(format!("{}: {e}", out.display())))?;
    match dependencies {
        Some(deps) => {
            let partial_list = work.join(format!("prog-{key}.deps.partial-{}", std::process::id()));
            std::fs::write(&partial_list, deps.to_text())
                .and_then(|()| std::fs::rename(&partial_list, &dependency_list))
                .map_err(|e| bad(format!("{}: {e}", dependency_list.display())))?;
        }
        // Without its list a build is never reused.
        None => {
            let _ = std::fs::remove_file(&dependency_list);
        }
    }
    Ok(out)
}

/// Every file the build of `files` will read (`nvcc -M` per source, at once), stamped now;
/// `None` when nvcc cannot say, and the build is then not reused.
fn read_by_build(
    toolchain: &crate::nvcc::Toolchain,
    flags: &[String],
    files: &[PathBuf],
) -> Option<Dependencies> {
    let rules = std::thread::scope(|scope| {
        let runs: Vec<_> = files
            .iter()
            .map(|file| {
                scope.spawn(move || {
                    let output = toolchain
                        .command()
                        .args(BUILD_FLAGS)
                        .args(flags)
                        .arg("-M")
                        .arg(file)
                        .output()
                        .ok()?;
                    output
                        .status
                        .success()
                        .then(|| String::from_utf8_lossy(&output.stdout).into_owned())
                })
            })
            .collect();
        runs.into_iter()
            .map(|run| run.join().ok().flatten())
            .collect::<Option<Vec<String>>>()
    })?;
    let mut paths: Vec<PathBuf> = rules.iter().flat_map(|r| parse_make_rule(r)).collect();
    paths.extend(files.iter().cloned());
    Dependencies::stamp(&paths)
}

/// A build's identity: nvcc's version, the folder it runs in, the flags and the sources' bytes.
/// The headers they include are checked apart ([`Dependencies`]).
fn build_key(nvcc_version: &str, folder: &Path, flags: &[String], files: &[PathBuf]) -> String {
    let mut hasher = blake3::Hasher::new();
    hasher.update(nvcc_version.as_bytes());
    hasher.update(folder.as_os_str().as_encoded_bytes());
    hasher.update(b"\0");
    for flag in BUILD_FLAGS
        .iter()
        .copied()
        .chain(flags.iter().map(String::as_str))
    {
        hasher.update(flag.as_bytes());
        hasher.update(b"\0");
    }
    for file in files {
        hasher.update(file.to_string_lossy().as_bytes());
        hasher.update(b"\0");
        hasher.update(&std::fs::read(file).unwrap_or_default());
    }
    hasher.finalize().to_hex()[..16].to_string()
}

/// What Racetrack's runtime exports as `racetrack_not_emulated_NAME` beside each runtime call
/// it carries only to say that it is not emulated yet.
const NOT_EMULATED_MARK: &str = "racetrack_not_emulated_";

/// The runtime calls a program needs that Racetrack's runtime does not run.
#[derive(Debug, Default)]
pub struct Unprovided {
    /// Calls the runtime has, which return `cudaErrorNotSupported` and name themselves.
    pub not_emulated: Vec<String>,
    /// Calls the runtime lacks: the dynamic linker ends the program at the first.
    pub missing: Vec<String>,
}

/// The runtime calls `program` imports that `runtime` does not run (by their names in `nm -D`);
/// nothing when `nm` cannot say.
pub fn missing_functions(program: &Path, runtime: &Path) -> Unprovided {
    let symbols = |path: &Path, undefined: bool| -> Option<Vec<String>> {
        let mut command = Command::new("nm");
        command
            .arg("-D")
            .arg(if undefined {
                "--undefined-only"
            } else {
                "--defined-only"
            })
            .arg(path);
        let output = command.output().ok()?;
        output.status.success().then(|| {
            String::from_utf8_lossy(&output.stdout)
                .lines()
                .filter_map(|l| l.split_whitespace().last())
                .map(|s| s.split('@').next().unwrap_or(s).to_string())
                .collect()
        })
    };
    let (Some(wanted), Some(provided)) = (symbols(program, true), symbols(runtime, false)) else {
        return Unprovided::default();
    };
    let mut unprovided = Unprovided::default();
    for symbol in wanted {
        if !(symbol.starts_with("cuda") || symbol.starts_with("__cuda")) {
            continue;
        }
        if provided.contains(&format!("{NOT_EMULATED_MARK}{symbol}")) {
            unprovided.not_emulated.push(symbol);
        } else if !provided.contains(&symbol) {
            unprovided.missing.push(symbol);
        }
    }
    for list in [&mut unprovided.missing, &mut unprovided.not_emulated] {
        list.sort();
        list.dedup();
    }
    unprovided
}

/// Whether `program` loads the CUDA runtime as a shared library (`nvcc -cudart shared`).
pub fn loads_shared_runtime(program: &Path) -> bool {
    Command::new("readelf")
        .arg("-d")
        .arg(program)
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).contains("libcudart.so"))
        .unwrap_or(true)
}

/// Runs the program with the environment of the chosen runtime and waits for it.
pub fn execute(
    request: &RunRequest,
    program: &Path,
    args: &[String],
    runtime: Runtime<'_>,
    work: &Path,
) -> Result<Outcome> {
    let findings_file = work.join(format!("findings-{}.jsonl", std::process::id()));
    let _ = std::fs::remove_file(&findings_file);
    let mut command = Command::new(program);
    command.args(args);
    match runtime {
        Runtime::Racetrack { folder, ptxas } => {
            let library = folder.join("libcudart.so.13");
            command.env("LD_PRELOAD", prepend_env("LD_PRELOAD", &library, " "));
            command.env(
                "LD_LIBRARY_PATH",
                prepend_env("LD_LIBRARY_PATH", folder, ":"),
            );
            command.env(crate::run::FINDINGS_ENV, &findings_file);
            if let Some(ptxas) = ptxas.filter(|_| std::env::var_os(PTXAS_ENV).is_none()) {
                command.env(PTXAS_ENV, ptxas);
            }
            if let Some(log) = &request.log_file {
                command.env(LOG_ENV, log);
            }
            if let Some(schedule) = &request.schedule {
                command.env(SCHEDULE_ENV, schedule);
            }
            if let Some(devices) = request.devices {
                command.env(DEVICES_ENV, devices.to_string());
            }
            if let Some(threads) = request.threads {
                command.env(ptx_emu::THREADS_ENV, threads.to_string());
            }
            if let Some(budget) = request.step_budget {
                command.env(ptx_emu::run_env::STEP_BUDGET, budget.to_string());
            }
            if let Some(engine) = request.engine {
                command.env(ptx_emu::ENGINE_ENV, engine.name());
            }
            if !request.checks_off.is_empty() {
                command.env(CHECKS_OFF_ENV, request.checks_off.join(","));
            }
            if request.timings {
                command.env(TIMINGS_ENV, "1");
            }
        }
        Runtime::Nvidia(folder) => {
            command.env(
                "LD_LIBRARY_PATH",
                prepend_env("LD_LIBRARY_PATH", folder, ":"),
            );
        }
    }
    let mut child = command
        .spawn()
        .map_err(|e| bad(format!("cannot run {}: {e}", program.display())))?;
    let status = {
        let _forwarding = SignalsToChild::start(child.id());
        child.wait()
    }
    .map_err(|e| bad(format!("cannot wait for {}: {e}", program.display())))?;
    let findings = std::fs::read_to_string(&findings_file)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    let _ = std::fs::remove_file(&findings_file);
    Ok(Outcome { status, findings })
}

/// The program being waited for, to pass signals on to (0: none).
static CHILD: std::sync::atomic::AtomicI32 = std::sync::atomic::AtomicI32::new(0);

/// While the program runs, Ctrl-C and SIGTERM are the program's to handle: Racetrack's runtime
/// then says what it found before it ends, and `racetrack run` stays to report how it ended. A
/// terminal sends Ctrl-C to both; a signal sent to `racetrack` alone (`kill`, `timeout`) is
/// passed on to the program.
struct SignalsToChild {
    before: [libc::sigaction; 2],
}

const PASSED_ON: [i32; 2] = [libc::SIGINT, libc::SIGTERM];

impl SignalsToChild {
    fn start(child: u32) -> SignalsToChild {
        CHILD.store(child as i32, std::sync::atomic::Ordering::SeqCst);
        // SAFETY: zeroed sigactions are valid out-parameters, and the handler is an
        // `extern "C"` SA_SIGINFO handler that lives as long as the process.
        unsafe {
            let mut before: [libc::sigaction; 2] = std::mem::zeroed();
            for (signal, old) in PASSED_ON.iter().zip(before.iter_mut()) {
                let mut action: libc::sigaction = std::mem::zeroed();
                action.sa_sigaction = pass_on as *const () as usize;
                action.sa_flags = libc::SA_SIGINFO | libc::SA_RESTART;
                libc::sigemptyset(&mut action.sa_mask);
                libc::sigaction(*signal, &action, old);
            }
            SignalsToChild { before }
        }
    }
}

impl Drop for SignalsToChild {
    fn drop(&mut self) {
        // SAFETY: restores the actions `start` replaced.
        unsafe {
            for (signal, old) in PASSED_ON.iter().zip(self.before.iter()) {
                libc::sigaction(*signal, old, std::ptr::null_mut());
            }
        }
        CHILD.store(0, std::sync::atomic::Ordering::SeqCst);
    }
}

/// Async-signal-safe: an atomic load and `kill`. A signal the terminal sent (`SI_KERNEL`)
/// reached the program too, so only one sent to Racetrack alone is passed on.
extern "C" fn pass_on(signal: i32, info: *mut libc::siginfo_t, _context: *mut libc::c_void) {
    // SAFETY: the kernel hands a valid siginfo to an SA_SIGINFO handler.
    let from_terminal = unsafe { (*info).si_code } == libc::SI_KERNEL;
    let child = CHILD.load(std::sync::atomic::Ordering::SeqCst);
    if !from_terminal && child > 0 {
        // SAFETY: kill is async-signal-safe.
        unsafe {
            libc::kill(child, signal);
        }
    }
}

/// Which CUDA runtime a program runs with.
#[derive(Debug, Clone, Copy)]
pub enum Runtime<'a> {
    /// Racetrack's, from `folder` (holding `libcudart.so.13`), counting kernels' registers with
    /// `ptxas` where there is one.
    Racetrack {
        folder: &'a Path,
        ptxas: Option<&'a Path>,
    },
    /// NVIDIA's, from the toolkit's folder.
    Nvidia(&'a Path),
}

fn prepend_env(name: &str, first: &Path, separator: &str) -> OsString {
    let mut value = OsString::from(first);
    if let Some(existing) = std::env::var_os(name).filter(|v| !v.is_empty()) {
        value.push(separator);
        value.push(existing);
    }
    value
}

/// The environment variables Racetrack's runtime reads (`cudart/`).
pub use ptx_emu::run_env::{
    CHECKS_OFF as CHECKS_OFF_ENV, DEVICES as DEVICES_ENV, FINDINGS as FINDINGS_ENV, LOG as LOG_ENV,
    PTXAS as PTXAS_ENV, SCHEDULE as SCHEDULE_ENV, TIMINGS as TIMINGS_ENV,
};

/// The folder for builds and runs: Racetrack's cache, else the system's temporary folder.
pub fn work_folder() -> PathBuf {
    crate::provision::cache_root()
        .map(|root| root.join("run"))
        .unwrap_or_else(|| std::env::temp_dir().join("racetrack-run"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_build_is_reused_only_for_the_same_sources_from_the_same_folder() {
        let dir = std::env::temp_dir().join(format!("racetrack-run-key-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("prog.cu");
        std::fs::write(&file, "int main() { return 0; }").unwrap();
        let files = [PathBuf::from("prog.cu")];
        let here = build_key("13.0.88", &dir, &[], &files);
        assert_eq!(here, build_key("13.0.88", &dir, &[], &files));
        assert_ne!(
            here,
            build_key("13.0.88", Path::new("/elsewhere"), &[], &files)
        );
        assert_ne!(here, build_key("13.0.88", &dir, &["-O3".into()], &files));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn runs_starting_at_once_from_an_empty_cache_all_get_the_runtime_folder() {
        let work = std::env::temp_dir().join(format!("racetrack-run-link-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&work);
        std::fs::create_dir_all(&work).unwrap();
        let library = work.join("libcudart.so");
        std::fs::write(&library, "").unwrap();
        std::thread::scope(|scope| {
            let runs: Vec<_> = (0..8)
                .map(|_| scope.spawn(|| prepare_runtime_folder(&library, &work)))
                .collect();
            for run in runs {
                let dir = run.join().unwrap().unwrap();
                let linked = std::fs::read_link(dir.join("libcudart.so.13")).unwrap();
                assert_eq!(linked, library.canonicalize().unwrap());
            }
        });
        std::fs::remove_dir_all(&work).unwrap();
    }

    fn os(args: &[&str]) -> Vec<OsString> {
        args.iter().map(OsString::from).collect()
    }

    #[test]
    fn a_build_line_is_split_into_flags_files_and_the_programs_arguments() {
        let dir = std::env::temp_dir().join(format!("racetrack-run-parse-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("prog.cu");
        std::fs::write(&file, "int main() {}").unwrap();
        let file = file.to_str().unwrap();
        let request = parse(&os(&[
            "--json",
            "out.json",
            "-I",
            "include",
            "-DN=4",
            "-O3",
            "-arch=sm_80",
            file,
            "-o",
            "prog",
            "--error-exitcode",
            "3",
            "--engine",
            "interp",
            "--",
            "4096",
            "--verbose",
        ]))
        .unwrap();
        assert_eq!(request.json, Some(PathBuf::from("out.json")));
        assert_eq!(request.error_exitcode, Some(3));
        assert_eq!(request.engine, Some(ptx_emu::Engine::Interp));
        assert!(
            parse(&os(&["--engine", "jit", file]))
                .err()
                .is_some_and(|e| e.to_string().contains("--engine jit: give interp"))
        );
        let Program::Source {
            flags,
            files,
            ignored,
            args,
        } = request.program
        else {
            panic!("a source program")
        };
        assert_eq!(flags, ["-I", "include", "-DN=4", "-O3"]);
        assert_eq!(files, [PathBuf::from(file)]);
        assert_eq!(ignored, ["-arch=sm_80", "-o prog"]);
        assert_eq!(args, ["4096", "--verbose"]);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn what_cannot_run_is_refused_in_one_sentence() {
        for (args, words) in [
            (&["prog.txt"][..], "not a source file"),
            (
                &["--backend", "gpu", "x.cu"][..],
                "choose auto, emu or cuda",
            ),
            (&["-lcublas", "x.cu"][..], "libcublas reaches the GPU"),
            (&["-dc", "x.cu"][..], "give -rdc=true and every source file"),
            (&["--error-exitcode", "300", "x.cu"][..], "from 0 to 255"),
            (&[][..], "give the program's source files"),
        ] {
            let error = parse(&os(args)).unwrap_err().to_string();
            assert!(error.contains(words), "{args:?}: {error}");
            assert!(!error.contains('\n'), "{error}");
        }
    }
}
