//! The compile cache with NVRTC itself: a second compile of an unchanged file is answered by
//! the cache with exactly what NVRTC made; what NVRTC reads changing (the source, a header, a
//! flag, the architecture) compiles afresh; a damaged entry is compiled and written again; and
//! `racetrack check` run again, or by several processes at once, skips NVRTC.

// Test helpers panic with context on purpose; a failed unwrap is a failed test.
#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use harness::compile_cache::{CompileCache, DEFAULT_CAP_BYTES};
use harness::nvrtc::{self, Compiled, EMU_ARCH, Extras, Served};
use harness::testing::{outputs_of_concurrent, require_nvrtc};

/// A folder of this test's own, removed when dropped.
struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str) -> Self {
        let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
            .join(format!("compile_cache-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Self(dir)
    }

    fn write(&self, name: &str, text: &str) -> PathBuf {
        let path = self.0.join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, text).unwrap();
        path
    }

    fn cache(&self) -> CompileCache {
        CompileCache::at(self.0.join("compiled"), DEFAULT_CAP_BYTES)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

const TEMPLATE: &str = "\
#include \"scale.h\"
template <typename T>
__global__ void scale(T *x, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = x[i] * SCALE * FACTOR;
}
";

fn extras(include: &Path, factor: &str) -> Extras {
    Extras {
        options: vec![
            format!("-I{}", include.display()),
            format!("-DFACTOR={factor}"),
        ],
        headers: Vec::new(),
        name_expressions: vec!["scale<float>".into(), "scale<int>".into()],
    }
}

fn compile(
    cache: &CompileCache,
    path: &Path,
    arch: &str,
    extras: &Extras,
) -> (harness::Result<Compiled>, Served) {
    let path = path.display().to_string();
    let source = std::fs::read_to_string(&path).unwrap();
    match nvrtc::compile_in(Some(cache), &path, &source, arch, extras) {
        Ok((compiled, served)) => (Ok(compiled), served),
        Err(error) => (Err(error), Served::Compiled),
    }
}

#[test]
fn an_unchanged_file_is_answered_by_the_cache_and_every_change_compiles_again() {
    require_nvrtc();
    let scratch = Scratch::new("changes");
    let include = scratch.0.join("include");
    scratch.write("include/scale.h", "#define SCALE 2\n");
    let file = scratch.write("scale.cu", TEMPLATE);
    let cache = scratch.cache();
    let flags = extras(&include, "3");

    let (first, served) = compile(&cache, &file, EMU_ARCH, &flags);
    let first = first.unwrap();
    assert_eq!(served, Served::Stored);
    assert_eq!(first.lowered_names.len(), 2, "{first:?}");
    let (again, served) = compile(&cache, &file, EMU_ARCH, &flags);
    assert_eq!(
        served,
        Served::Hit,
        "the same file and flags compiled again"
    );
    assert_eq!(
        again.unwrap(),
        first,
        "the cache gives back exactly what NVRTC made"
    );
    // And that is what NVRTC makes without any cache.
    let path = file.display().to_string();
    let fresh = nvrtc::compile_uncached(
        &path,
        &std::fs::read_to_string(&file).unwrap(),
        EMU_ARCH,
        &flags,
    )
    .unwrap();
    assert_eq!(fresh, first);
    assert_eq!(cache.usage().unwrap().entries, 1);

    // Each change misses, and NVRTC's new output is what comes back.
    let (other_flag, served) = compile(&cache, &file, EMU_ARCH, &extras(&include, "5"));
    assert_eq!(served, Served::Stored, "-D FACTOR=5 after FACTOR=3");
    assert_ne!(other_flag.unwrap().ptx, first.ptx);
    let (other_arch, served) = compile(&cache, &file, "compute_80", &flags);
    assert_eq!(served, Served::Stored, "another architecture");
    assert!(other_arch.unwrap().ptx.contains(".target sm_80"));
    scratch.write("include/scale.h", "#define SCALE 7\n");
    let (other_header, served) = compile(&cache, &file, EMU_ARCH, &flags);
    assert_eq!(served, Served::Stored, "an included header changed");
    assert_ne!(other_header.unwrap().ptx, first.ptx);
    scratch.write("scale.cu", &TEMPLATE.replace("x[i] *", "x[i] + x[i] *"));
    let (other_source, served) = compile(&cache, &file, EMU_ARCH, &flags);
    assert_eq!(served, Served::Stored, "the source changed");
    assert_ne!(other_source.unwrap().ptx, first.ptx);

    // Back to the first header and source: the first entry answers again.
    scratch.write("include/scale.h", "#define SCALE 2\n");
    scratch.write("scale.cu", TEMPLATE);
    let (back, served) = compile(&cache, &file, EMU_ARCH, &flags);
    assert_eq!((back.unwrap(), served), (first, Served::Hit));
}

#[test]
fn what_nvrtc_refuses_is_kept_too_and_read_back_as_the_same_error() {
    require_nvrtc();
    let scratch = Scratch::new("refused");
    let file = scratch.write(
        "broken.cu",
        "__global__ void k(int *x)\n{\n    x[tid] = 1;\n}\n",
    );
    let cache = scratch.cache();
    let (first, _) = compile(&cache, &file, EMU_ARCH, &Extras::default());
    let first = first.unwrap_err().to_string();
    assert!(first.contains("broken.cu:3: error"), "{first}");
    assert_eq!(cache.usage().unwrap().entries, 1, "the refusal was kept");
    let (again, _) = compile(&cache, &file, EMU_ARCH, &Extras::default());
    assert_eq!(again.unwrap_err().to_string(), first);
    assert_eq!(cache.usage().unwrap().entries, 1);
}

#[test]
fn a_damaged_entry_is_compiled_and_written_again() {
    require_nvrtc();
    let scratch = Scratch::new("damaged");
    let file = scratch.write(
        "k.cu",
        "extern \"C\" __global__ void k(int *x) { x[0] = 1; }\n",
    );
    let cache = scratch.cache();
    let (first, served) = compile(&cache, &file, EMU_ARCH, &Extras::default());
    assert_eq!(served, Served::Stored);
    let first = first.unwrap();
    let entry = std::fs::read_dir(cache.dir())
        .unwrap()
        .flatten()
        .map(|item| item.path())
        .find(|path| path.is_file())
        .unwrap();
    let whole = std::fs::read(&entry).unwrap();
    std::fs::write(&entry, &whole[..whole.len() - 10]).unwrap();
    let (again, served) = compile(&cache, &file, EMU_ARCH, &Extras::default());
    assert_eq!(
        (again.unwrap(), served),
        (first.clone(), Served::Stored),
        "a truncated entry is a miss"
    );
    assert_eq!(
        std::fs::read(&entry).unwrap(),
        whole,
        "and it was written again"
    );
    let (hit, served) = compile(&cache, &file, EMU_ARCH, &Extras::default());
    assert_eq!((hit.unwrap(), served), (first, Served::Hit));
}

/// `racetrack check` as a user runs it, with a cache folder of the test's own and NVRTC from
/// where this process found it (so nothing is fetched).
fn racetrack(scratch: &Scratch, args: &[&str]) -> Command {
    let mut command = Command::new(harness::ptx::workspace_binary(env!(
        "CARGO_BIN_EXE_racetrack"
    )));
    command
        .args(args)
        .current_dir(&scratch.0)
        .env("XDG_CACHE_HOME", scratch.0.join("cache"))
        .env_remove(harness::compile_cache::CACHE_ENV)
        .env_remove(harness::BACKEND_ENV);
    if let Some(library) = nvrtc::nvrtc().and_then(|found| found.path.as_ref()) {
        let mut dirs = vec![library.parent().unwrap().to_path_buf()];
        if let Some(paths) = std::env::var_os("LD_LIBRARY_PATH") {
            dirs.extend(std::env::split_paths(&paths));
        }
        command.env("LD_LIBRARY_PATH", std::env::join_paths(dirs).unwrap());
    }
    command
}

const CHECK: &[&str] = &[
    "check",
    "bump.cu",
    "--entry",
    "bump",
    "--grid",
    "1",
    "--block",
    "32",
    "--arg",
    "x:i32[1]=zeros",
    "--backend",
    "emu",
    "--timings",
];

fn text(output: &Output) -> String {
    format!(
        "status {:?}\nstdout:\n{}\nstderr:\n{}",
        output.status.code(),
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

fn compile_line(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr)
        .lines()
        .find(|line| line.trim_start().starts_with("compile "))
        .unwrap_or_else(|| panic!("no compile line in --timings: {}", text(output)))
        .to_string()
}

fn entries(cache: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(cache)
        .map(|listing| listing.flatten().map(|item| item.path()).collect())
        .unwrap_or_default()
}

/// A hit costs what the cache costs: NVRTC's library is named in the key by its file, found
/// without loading it, and loaded only on a miss (glibc's loader says what it loads under
/// `LD_DEBUG=files`).
#[test]
fn a_cached_compile_does_not_load_nvrtc() {
    require_nvrtc();
    let scratch = Scratch::new("no-load");
    scratch.write(
        "bump.cu",
        "__global__ void bump(int *x) { atomicAdd(&x[0], 1); }\n",
    );
    let loaded = |output: &Output| String::from_utf8_lossy(&output.stderr).contains("libnvrtc");
    let first = racetrack(&scratch, CHECK)
        .env("LD_DEBUG", "files")
        .output()
        .unwrap();
    assert!(first.status.success(), "{}", text(&first));
    if !loaded(&first) {
        eprintln!("skipped: this system's loader does not say what it loads under LD_DEBUG");
        return;
    }
    let again = racetrack(&scratch, CHECK)
        .env("LD_DEBUG", "files")
        .output()
        .unwrap();
    assert!(again.status.success(), "{}", text(&again));
    assert!(
        compile_line(&again).contains("from the compile cache"),
        "{}",
        text(&again)
    );
    assert!(!loaded(&again), "a hit loaded NVRTC:\n{}", text(&again));
    assert_eq!(again.stdout, first.stdout, "the same report");
    // An edit is a miss, which loads NVRTC and compiles.
    scratch.write(
        "bump.cu",
        "__global__ void bump(int *x) { atomicAdd(&x[0], 2); }\n",
    );
    let edited = racetrack(&scratch, CHECK)
        .env("LD_DEBUG", "files")
        .output()
        .unwrap();
    assert!(
        compile_line(&edited).contains("NVRTC, kept"),
        "{}",
        text(&edited)
    );
    assert!(loaded(&edited), "{}", text(&edited));
    assert!(
        String::from_utf8_lossy(&edited.stdout).contains("[64]"),
        "{}",
        text(&edited)
    );
}

#[test]
fn racetrack_check_of_an_unchanged_file_skips_nvrtc() {
    require_nvrtc();
    let scratch = Scratch::new("check-again");
    scratch.write(
        "bump.cu",
        "__global__ void bump(int *x) { atomicAdd(&x[0], 1); }\n",
    );
    let first = racetrack(&scratch, CHECK).output().unwrap();
    assert!(first.status.success(), "{}", text(&first));
    assert!(
        compile_line(&first).contains("NVRTC, kept in the compile cache"),
        "{}",
        text(&first)
    );
    let again = racetrack(&scratch, CHECK).output().unwrap();
    assert!(again.status.success(), "{}", text(&again));
    assert!(
        compile_line(&again).contains("from the compile cache"),
        "{}",
        text(&again)
    );
    assert_eq!(again.stdout, first.stdout, "the same report");
    assert!(String::from_utf8_lossy(&again.stdout).contains("[32]"));
    // `racetrack doctor` shows the entry.
    let doctor = racetrack(&scratch, &["doctor"]).output().unwrap();
    let doctor = String::from_utf8_lossy(&doctor.stdout).into_owned();
    let row = doctor
        .lines()
        .find(|line| line.contains("Compile cache"))
        .unwrap_or_else(|| panic!("no compile cache row: {doctor}"));
    assert!(row.contains("in 1 entry, at most 64 MiB"), "{row}");

    // Deleting the folder is safe: the next run compiles again.
    std::fs::remove_dir_all(scratch.0.join("cache/racetrack/compiled")).unwrap();
    let after = racetrack(&scratch, CHECK).output().unwrap();
    assert!(after.status.success(), "{}", text(&after));
    assert!(
        compile_line(&after).contains("NVRTC, kept"),
        "{}",
        text(&after)
    );
    assert_eq!(after.stdout, first.stdout);
}

#[test]
fn concurrent_checks_compile_once_and_leave_one_whole_entry() {
    require_nvrtc();
    let scratch = Scratch::new("check-concurrent");
    scratch.write(
        "bump.cu",
        "__global__ void bump(int *x) { atomicAdd(&x[0], 1); }\n// concurrent\n",
    );
    // The python3 answer and NVRTC's place are settled first, so that the processes meet at
    // the compile.
    let warm = racetrack(&scratch, &["doctor"]).output().unwrap();
    assert!(warm.status.success(), "{}", text(&warm));
    let outputs = outputs_of_concurrent((0..4).map(|_| racetrack(&scratch, CHECK)));
    for output in &outputs {
        assert!(output.status.success(), "{}", text(output));
        assert_eq!(output.stdout, outputs[0].stdout);
    }
    let compiled = outputs
        .iter()
        .filter(|output| compile_line(output).contains("NVRTC"))
        .count();
    assert_eq!(
        compiled, 1,
        "one process compiles, the others wait for it and read its entry"
    );
    let cache = scratch.0.join("cache/racetrack/compiled");
    let files: Vec<PathBuf> = entries(&cache)
        .into_iter()
        .filter(|path| path.is_file())
        .collect();
    assert_eq!(
        files.len(),
        1,
        "one entry and nothing half-written: {files:?}"
    );
    let usage = CompileCache::at(&cache, DEFAULT_CAP_BYTES).usage().unwrap();
    assert_eq!(usage.entries, 1);
}
