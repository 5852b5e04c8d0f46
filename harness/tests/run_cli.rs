//! `racetrack run` end to end: whole programs built by nvcc, run with their own `main` on
//! Racetrack's CUDA runtime. Fixed programs print their answer and report nothing; broken ones
//! are reported at their `// BUG:` line, kernel-side and host-side alike. With
//! `RACETRACK_BACKEND=cuda` each program also runs with NVIDIA's runtime on the GPU, and a fixed
//! program must print the same there.

use std::path::{Path, PathBuf};

use harness::kernel::line_of_marker;
use harness::ptx::{workspace_binary, workspace_root};
use serde_json::Value;

struct Ran {
    code: i32,
    stdout: String,
    stderr: String,
    findings: Vec<Value>,
}

/// A folder for what the tests write: the system's, so that staged test binaries on a GPU
/// machine (where this build's target folder is not) have one too.
fn scratch() -> PathBuf {
    let dir = std::env::temp_dir().join("racetrack-run_cli");
    std::fs::create_dir_all(&dir).expect("a scratch folder");
    dir
}

fn racetrack_run(dir: &Path, args: &[&str]) -> Ran {
    let json = scratch().join(format!(
        "run_cli-{}-{}.json",
        std::process::id(),
        std::thread::current()
            .name()
            .unwrap_or("main")
            .replace("::", "-")
    ));
    let _ = std::fs::remove_file(&json);
    let output = std::process::Command::new(workspace_binary(env!("CARGO_BIN_EXE_racetrack")))
        .current_dir(dir)
        .arg("run")
        .args(if args.contains(&"--backend") {
            &[][..]
        } else {
            &["--backend", "emu"][..]
        })
        .arg("--json")
        .arg(&json)
        .args(args)
        .output()
        .expect("racetrack runs");
    let findings = std::fs::read_to_string(&json)
        .ok()
        .and_then(|text| serde_json::from_str::<Value>(&text).ok())
        .and_then(|v| v["findings"].as_array().cloned())
        .unwrap_or_default();
    Ran {
        code: output.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        findings,
    }
}

/// What a program's header says it is.
struct Contract {
    broken: Option<String>,
    bug_line: Option<u32>,
    args: Vec<String>,
    /// `// Devices: N`: how many GPUs the program needs.
    devices: Option<String>,
    /// The flags of the `// Build: nvcc FLAGS -o prog FILE` line, beyond the output and the
    /// source (`-rdc=true`).
    build: Vec<String>,
    /// `// Compare: gpu`: a broken program whose output must still be a GPU's (the errors it
    /// prints).
    compare_on_gpu: bool,
}

fn contract(path: &Path) -> Contract {
    let source = std::fs::read_to_string(path).expect("program source");
    let first = source.lines().next().unwrap_or_default();
    let broken = first
        .strip_prefix("// BROKEN(")
        .and_then(|rest| rest.split_once(')'))
        .map(|(kind, _)| kind.to_string());
    let args = source
        .lines()
        .find_map(|l| l.strip_prefix("// Run: "))
        .map(|run| run.split_whitespace().skip(1).map(str::to_string).collect())
        .unwrap_or_default();
    let devices = source
        .lines()
        .find_map(|l| l.strip_prefix("// Devices: "))
        .map(|n| n.trim().to_string());
    let mut build = Vec::new();
    if let Some(line) = source
        .lines()
        .find_map(|l| l.strip_prefix("// Build: nvcc "))
    {
        let mut words = line.split_whitespace();
        while let Some(word) = words.next() {
            if word == "-o" {
                words.next();
            } else if ![".cu", ".cpp", ".c"].iter().any(|s| word.ends_with(s)) {
                build.push(word.to_string());
            }
        }
    }
    Contract {
        build,
        compare_on_gpu: broken.is_none() || source.lines().any(|l| l == "// Compare: gpu"),
        broken,
        bug_line: line_of_marker(&source, "// BUG:"),
        args,
        devices,
    }
}

/// Whether a finding names `line`: a kernel's line, or the host line of the call or launch.
fn names_line(finding: &Value, line: u32) -> bool {
    finding["lines"]
        .as_array()
        .is_some_and(|lines| lines.iter().any(|l| l.as_u64() == Some(line as u64)))
        || finding["host"]
            .as_str()
            .is_some_and(|host| host.ends_with(&format!(":{line}")))
}

fn kind_matches(finding: &Value, broken: &str) -> bool {
    let kind = finding["kind"].as_str().unwrap_or_default();
    match broken {
        "race" => kind.contains("race"),
        "out of bounds" | "out-of-bounds" => kind.contains("out-of-bounds"),
        // A host-side bug: anything but the kernel checkers' kinds.
        "host" | "launch" => !kind.contains("race") && !kind.contains("out-of-bounds"),
        _ => true,
    }
}

fn check_program(dir: &Path, file: &str) {
    let path = dir.join(file);
    let c = contract(&path);
    let mut args = Vec::new();
    if let Some(devices) = &c.devices {
        args.extend(["--devices", devices.as_str()]);
    }
    args.extend(c.build.iter().map(String::as_str));
    args.push(file);
    args.push("--");
    args.extend(c.args.iter().map(String::as_str));
    let ran = racetrack_run(dir, &args);
    let context = format!(
        "{file}: exit {}\nstdout:\n{}\nstderr:\n{}",
        ran.code, ran.stdout, ran.stderr
    );
    assert!(!ran.stderr.contains("panicked"), "{context}");
    match &c.broken {
        None => {
            assert_eq!(ran.code, 0, "{context}");
            assert!(ran.findings.is_empty(), "{context}");
            assert!(ran.stderr.contains("racetrack: no findings"), "{context}");
        }
        Some(kind) if kind != "wrong-result" => {
            let line = c.bug_line.expect("a broken program marks its // BUG: line");
            assert!(
                ran.findings
                    .iter()
                    .any(|f| names_line(f, line) && kind_matches(f, kind)),
                "{kind} at line {line} expected: {context}"
            );
            // Every line Racetrack wrote is marked as Racetrack's.
            for l in ran
                .stderr
                .lines()
                .filter(|l| l.contains("race (") || l.contains("out-of-bounds"))
            {
                assert!(l.starts_with("racetrack: "), "{l}");
            }
        }
        Some(_) => assert_ne!(ran.code, 0, "a wrong result must fail: {context}"),
    }
    if c.compare_on_gpu && gpus_here() >= c.devices.as_deref().map_or(1, |n| n.parse().unwrap_or(1))
    {
        let mut on_gpu = vec!["--backend", "cuda"];
        on_gpu.extend(args.iter().copied());
        let gpu = racetrack_run(dir, &on_gpu);
        assert_eq!(gpu.code, ran.code, "{file} on the GPU: {}", gpu.stderr);
        assert_eq!(
            gpu.stdout, ran.stdout,
            "{file}: the GPU and the emulator printed differently"
        );
    }
}

/// How many GPUs the comparison has (0 without a GPU): asked once per test binary.
fn gpus_here() -> usize {
    static GPUS: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *GPUS.get_or_init(|| {
        if !harness::testing::gpu_for_test() {
            return 0;
        }
        harness::Gpus::open(harness::BackendChoice::Cuda, 1, 1).map_or(0, |g| g.count())
    })
}

fn programs_in(dir: &Path) -> Vec<String> {
    let mut files: Vec<String> = std::fs::read_dir(dir)
        .expect("programs folder")
        .flatten()
        .filter_map(|e| e.file_name().to_str().map(str::to_string))
        .filter(|n| n.ends_with(".cu"))
        .collect();
    files.sort();
    files
}

/// Every chapter as a whole program, fixed and broken, as a tutorial writes it: the fixed one
/// prints the CPU's answer and reports nothing, the broken one is reported at its `// BUG:`
/// line, kernel-side or host-side.
#[test]
fn chapter_programs_keep_the_chapters_contract() {
    let root = workspace_root().join("programs");
    let mut chapters: Vec<PathBuf> = std::fs::read_dir(&root)
        .expect("programs/")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    chapters.sort();
    assert_eq!(chapters.len(), 8, "{chapters:?}");
    for chapter in chapters {
        let files = programs_in(&chapter);
        assert!(
            files.iter().any(|f| f.ends_with("_broken.cu")) && files.len() >= 2,
            "{}: a fixed and a broken program",
            chapter.display()
        );
        for file in files {
            check_program(&chapter, &file);
        }
    }
}

/// Host-side bugs, one program each: a host pointer in a launch, a copy past an allocation's
/// end, a freed pointer, a kernel racing an async copy on another stream, a launch no GPU
/// runs; and one fixed program using streams, events, symbols and pinned memory.
#[test]
fn host_side_programs_are_reported_at_their_line() {
    let dir = workspace_root().join("harness/tests/run_programs");
    for file in programs_in(&dir) {
        check_program(&dir, &file);
    }
}

#[test]
fn a_fixed_program_prints_its_answer_and_exits_with_its_own_code() {
    let dir = workspace_root().join("harness/tests/run_programs");
    let ran = racetrack_run(&dir, &["fixed_streams.cu", "--", "300"]);
    assert_eq!(ran.code, 0, "{}", ran.stderr);
    assert_eq!(
        ran.stdout,
        "scale ran with 2 blocks\nn = 300, total = 134550.0, expected 134550.0, calls = 1\nno error\n"
    );
}

/// `--timings`: when the program ends, each kernel's launches and thread-instructions, and the
/// time they took, as a table of Racetrack's lines.
#[test]
fn timings_say_each_kernels_launches_when_the_program_ends() {
    let dir = workspace_root().join("harness/tests/run_programs");
    let ran = racetrack_run(&dir, &["--timings", "fixed_streams.cu", "--", "300"]);
    assert_eq!(ran.code, 0, "{}", ran.stderr);
    let table: Vec<&str> = ran
        .stderr
        .lines()
        .skip_while(|l| !l.starts_with("racetrack: timings: the program took"))
        .collect();
    let row = |name: &str| {
        table
            .iter()
            .find(|l| l.contains(name))
            .map(|l| l.split('┆').map(str::trim).collect::<Vec<_>>())
            .unwrap_or_else(|| panic!("no row for {name}: {}", ran.stderr))
    };
    // One launch of 2 blocks of 256 threads (300 elements): every thread runs at least its
    // index, its comparison and its return.
    let scale = row("scale<…>");
    assert_eq!(scale[1], "1", "{scale:?}");
    let instructions: u64 = scale[2].parse().expect("a count");
    assert!(instructions >= 3 * 512, "{scale:?}");
    assert_eq!(row("all kernels")[2], scale[2]);
    assert!(
        table.iter().all(|l| l.starts_with("racetrack: ")),
        "{table:?}"
    );
    let quiet = racetrack_run(&dir, &["fixed_streams.cu", "--", "300"]);
    assert!(!quiet.stderr.contains("timings"), "{}", quiet.stderr);
}

/// A header outside the source's folder and every `-I` folder (here a sibling folder, reached
/// by a relative `#include`) is still part of the build: editing it rebuilds the program.
#[test]
fn a_build_is_redone_when_any_header_it_read_changes() {
    let root = scratch().join(format!("header-edit-{}", std::process::id()));
    let (source_dir, header_dir) = (root.join("program"), root.join("common"));
    std::fs::create_dir_all(&source_dir).unwrap();
    std::fs::create_dir_all(&header_dir).unwrap();
    std::fs::write(
        source_dir.join("answer.cu"),
        "#include <cstdio>\n#include \"../common/answer.h\"\n\
         __global__ void answer(int *out) { *out = ANSWER; }\n\
         int main() {\n  int *d, h = 0;\n  cudaMalloc(&d, sizeof(int));\n  answer<<<1, 1>>>(d);\n\
         \x20 cudaMemcpy(&h, d, sizeof(int), cudaMemcpyDeviceToHost);\n  printf(\"%d\\n\", h);\n  return 0;\n}\n",
    )
    .unwrap();
    let header = header_dir.join("answer.h");
    for answer in [41, 42] {
        std::fs::write(&header, format!("#define ANSWER {answer}\n")).unwrap();
        let ran = racetrack_run(&source_dir, &["answer.cu"]);
        assert_eq!(ran.code, 0, "{}", ran.stderr);
        assert_eq!(ran.stdout, format!("{answer}\n"));
    }
    std::fs::remove_dir_all(&root).unwrap();
}

/// The runtime's own allocations (the emulator's modules, memory and checkers' state) live in
/// a heap of their own: the program's `malloc` heap holds only what the program and its C++
/// library put there, so what a program finds in memory it never wrote does not come from the
/// emulator (before, 20 MB of it did).
///
/// Two cores, on any machine: each thread of the runtime gets an arena of glibc's own at its
/// first call into the C library (132 KiB, holding its malloc cache of about 2 KiB), so the
/// heap of a 16-core machine measures 2.1 MB with none of the emulator's memory in it.
#[test]
fn the_programs_malloc_heap_holds_none_of_the_runtimes_memory() {
    let dir = scratch().join(format!("heap-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("heap.cu"),
        "#include <cstdio>\n#include <malloc.h>\n\
         __global__ void fill(float *x, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) x[i] = i; }\n\
         int main() {\n  int n = 1 << 18;\n  float *d;\n  cudaMalloc(&d, n * sizeof(float));\n\
         \x20 fill<<<n / 256, 256>>>(d, n);\n  cudaDeviceSynchronize();\n  cudaFree(d);\n\
         \x20 struct mallinfo2 heap = mallinfo2();\n  printf(\"%zu %zu\\n\", heap.arena, heap.uordblks);\n  return 0;\n}\n",
    )
    .unwrap();
    let ran = racetrack_run(&dir, &["--threads", "2", "heap.cu"]);
    assert_eq!(ran.code, 0, "{}", ran.stderr);
    let sizes: Vec<u64> = ran
        .stdout
        .split_whitespace()
        .map(|size| size.parse().expect("a size"))
        .collect();
    let [heap_bytes, in_use] = sizes[..] else {
        panic!("the heap's size and its bytes in use: {}", ran.stdout);
    };
    assert!(
        heap_bytes < 1 << 20,
        "the program's heap grew to {heap_bytes} bytes"
    );
    assert!(in_use < 1 << 20, "the program's heap holds {in_use} bytes");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Graphs beyond capture and replay (conditional nodes, memory nodes, updates) and
/// `cudaHostRegister`: each program prints what CUDA computes, which the GPU comparison in
/// `host_side_programs_are_reported_at_their_line` checks where there is a GPU; here, the
/// emulator's output is held to the same text.
#[test]
fn graph_and_registered_memory_programs_print_what_cuda_computes() {
    let dir = workspace_root().join("harness/tests/run_programs");
    let expected = [
        (
            "graph_conditional.cu",
            "if x = 4..7 is odd: 0 1 0 1\n\
             while counting down from 5: 4 3 2 1 0\n\
             switch on x = 3..0: 12 11 10\n\
             no error\n",
        ),
        (
            "graph_memory.cu",
            "b takes a's address: yes\n\
             after instantiating                             0 MiB in use\n\
             after the first launch                         64 MiB in use\n\
             after the second launch, same stream           64 MiB in use\n\
             sum of both launches: 65792 (expected 65792)\n\
             captured graph's sum: 288640 (expected 288640)\n\
             with an allocation kept after its launch       64 MiB in use\n\
             trimmed while it is kept                       64 MiB in use\n\
             after cudaFree of it                           64 MiB in use\n\
             trimmed                                         0 MiB in use\n\
             high-water mark                                64 MiB\n\
             high-water mark, reset                          0 MiB\n\
             no error\n",
        ),
        (
            "graph_update.cu",
            "set params: y[10] = 70, z[10] = 20\n\
             update 1: cudaSuccess, cudaGraphExecUpdateSuccess, y[10] = 20\n\
             update 2: cudaSuccess, cudaGraphExecUpdateSuccess, y[10] = 40\n\
             update 3: cudaSuccess, cudaGraphExecUpdateSuccess, y[10] = 60\n\
             longer graph: cudaErrorGraphExecUpdateFailure, cudaGraphExecUpdateErrorTopologyChanged\n\
             after it: the graph update was not performed because it included changes which violated constraints specific to instantiated graph update\n\
             still the last update: y[10] = 60\n",
        ),
        (
            "host_register.cu",
            "before registering: unregistered\n\
             registered: host (registered)\n\
             copied through the device: heap[10] = 11, heap[2999] = 3000\n\
             squared in place: mapped[12] = 144, mapped[2999] = 8994001\n\
             host wrote 7, kernel squared it: mapped[0] = 49\n\
             registering it again: cudaErrorHostMemoryAlreadyRegistered\n\
             unregistered: unregistered, mapped[12] = 144, heap[10] = 11\n\
             unregistering it again: cudaErrorHostMemoryNotRegistered\n\
             no error\n",
        ),
    ];
    for (file, stdout) in expected {
        let ran = racetrack_run(&dir, &[file]);
        assert_eq!(ran.code, 0, "{file}: {}", ran.stderr);
        assert_eq!(ran.stdout, stdout, "{file}: {}", ran.stderr);
    }
}

#[test]
fn error_exitcode_replaces_the_programs_code_only_when_a_checker_reported() {
    let dir = workspace_root().join("harness/tests/run_programs");
    let racy = racetrack_run(&dir, &["--error-exitcode", "9", "stream_race.cu"]);
    assert_eq!(racy.code, 9, "{}", racy.stderr);
    // The race names the host lines of both operations: the copy on a, the launch on b.
    assert!(
        racy.stderr.contains(
            "sum at stream_race.cu:22 (main) on device 0's stream 2 touches bytes that the copy from the host at stream_race.cu:21 (main) on device 0's stream 1 wrote"
        ),
        "{}",
        racy.stderr
    );
    let clean = racetrack_run(&dir, &["--error-exitcode", "9", "fixed_streams.cu"]);
    assert_eq!(clean.code, 0, "{}", clean.stderr);
}

#[test]
fn log_file_takes_racetracks_lines_and_leaves_the_programs_stderr_alone() {
    let dir = workspace_root().join("harness/tests/run_programs");
    let log = scratch().join("run_cli-log.txt");
    let _ = std::fs::remove_file(&log);
    let ran = racetrack_run(
        &dir,
        &["--log-file", log.to_str().unwrap(), "copy_past_end.cu"],
    );
    assert!(ran.stderr.is_empty(), "{}", ran.stderr);
    assert_eq!(ran.stdout, "cudaErrorInvalidValue\n");
    let logged = std::fs::read_to_string(&log).expect("the log");
    assert!(
        logged.contains("racetrack: copy past the end of an allocation"),
        "{logged}"
    );
    assert!(
        logged.contains("; cudaMemcpy did nothing and returned cudaErrorInvalidValue"),
        "{logged}"
    );
    assert!(
        logged.lines().all(|l| l.starts_with("racetrack: ")),
        "{logged}"
    );
}

/// `source` built by plain nvcc (`-cudart shared` and `flags`) into the scratch folder as `name`.
fn built_by_nvcc(source: &Path, flags: &[&str], name: &str) -> PathBuf {
    let exe = scratch().join(name);
    let built = harness::nvcc::require_nvcc()
        .expect("nvcc")
        .command()
        .args(["-cudart", "shared"])
        .args(flags)
        .arg("-o")
        .arg(&exe)
        .arg(source)
        .output()
        .expect("nvcc runs");
    assert!(
        built.status.success(),
        "{}",
        String::from_utf8_lossy(&built.stderr)
    );
    exe
}

/// A binary built by plain nvcc (compressed PTX for nvcc's default architecture, no line
/// tables): its kernels still run, and findings name the function for want of a line.
#[test]
fn a_program_built_by_nvcc_runs_as_compute_sanitizer_would_run_it() {
    let dir = workspace_root().join("harness/tests/run_programs");
    let exe = built_by_nvcc(&dir.join("stream_race.cu"), &[], "run_cli-stream_race");
    let ran = racetrack_run(&dir, &[exe.to_str().unwrap()]);
    assert_eq!(ran.stdout, "sum = 256\n", "{}", ran.stderr);
    assert_eq!(ran.findings.len(), 1, "{}", ran.stderr);
    assert!(
        ran.stderr.contains("at main (build with -g for its line)"),
        "{}",
        ran.stderr
    );
}

/// `ptxVersion` is the architecture of the PTX that runs (CUB's Thrust algorithms fail with
/// `cudaErrorInvalidDeviceFunction` when it is not one the program was built for), on the
/// emulator as on a GPU, whose driver compiles that PTX for itself.
#[test]
fn a_kernels_ptx_version_is_the_architecture_it_was_built_for() {
    let dir = workspace_root().join("harness/tests/nvcc_built");
    for (flags, expected) in [
        (&[][..], "ptxVersion 75\n"),
        (&["-arch=sm_80"][..], "ptxVersion 80\n"),
    ] {
        let name = format!("run_cli-ptx_version{}", flags.len());
        let exe = built_by_nvcc(&dir.join("ptx_version.cu"), flags, &name);
        let ran = racetrack_run(&dir, &[exe.to_str().unwrap()]);
        assert_eq!(ran.stdout, expected, "{flags:?}: {}", ran.stderr);
        if gpus_here() > 0 {
            let gpu = racetrack_run(&dir, &["--backend", "cuda", exe.to_str().unwrap()]);
            assert_eq!(gpu.stdout, expected, "{flags:?} on the GPU: {}", gpu.stderr);
        }
    }
}

/// SIGTERM (or Ctrl-C) during a kernel that would run for hours: while it runs, a line on the
/// terminal says for how long; then the launch stops, the program ends by that signal after a
/// line naming the launch, and what was found before (a race in the kernel before it), the
/// `--timings` table and Racetrack's summary are all there.
#[test]
fn a_signal_during_a_launch_ends_the_program_with_what_was_found() {
    use std::io::BufRead;
    use std::os::fd::FromRawFd;
    let dir = workspace_root().join("harness/tests/run_signals");
    let json = scratch().join(format!("run_cli-interrupted-{}.json", std::process::id()));
    // stderr on a terminal, where the progress line is drawn.
    let (mut terminal, mut program_side) = (0, 0);
    // Wide enough for the whole line: a narrower one is cut short.
    let size = libc::winsize {
        ws_row: 24,
        ws_col: 200,
        ws_xpixel: 0,
        ws_ypixel: 0,
    };
    // SAFETY: openpty fills the two descriptors and reads the size; the others may be null.
    let opened = unsafe {
        libc::openpty(
            &mut terminal,
            &mut program_side,
            std::ptr::null_mut(),
            std::ptr::null(),
            &size,
        )
    };
    assert_eq!(opened, 0, "a pseudo-terminal");
    // SAFETY: both descriptors are fresh and owned here alone.
    let (terminal, program_side) = unsafe {
        (
            std::fs::File::from_raw_fd(terminal),
            std::fs::File::from_raw_fd(program_side),
        )
    };
    let mut racetrack =
        std::process::Command::new(workspace_binary(env!("CARGO_BIN_EXE_racetrack")))
            .current_dir(&dir)
            .args(["run", "--backend", "emu", "--timings", "--json"])
            .arg(&json)
            .arg("interrupted.cu")
            .stdout(std::process::Stdio::piped())
            .stderr(program_side)
            .spawn()
            .expect("racetrack runs");
    // Should the signal be lost, the kernel would run for hours: end it, and the test fails.
    let pid = racetrack.id() as i32;
    let (done, finished) = std::sync::mpsc::channel::<()>();
    let guard = std::thread::spawn(move || {
        if finished
            .recv_timeout(std::time::Duration::from_secs(300))
            .is_err()
        {
            // SAFETY: kill has no memory effects; the pid is the test's own child.
            unsafe { libc::kill(pid, libc::SIGKILL) };
        }
    });
    let on_terminal = std::thread::spawn(move || {
        let mut text = Vec::new();
        // Reading ends with EIO once the last program-side descriptor closes.
        let _ = std::io::Read::read_to_end(&mut &terminal, &mut text);
        String::from_utf8_lossy(&text).into_owned()
    });
    let mut stdout = std::io::BufReader::new(racetrack.stdout.take().expect("piped"));
    let mut first = String::new();
    stdout.read_line(&mut first).expect("the program's stdout");
    assert_eq!(first, "the long kernel starts\n");
    // Past the first second of the launch, which the program makes right after its line.
    std::thread::sleep(std::time::Duration::from_millis(4000));
    // SAFETY: as above.
    unsafe { libc::kill(pid, libc::SIGTERM) };
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut stdout, &mut rest).expect("stdout");
    let status = racetrack.wait().expect("racetrack ends");
    let _ = done.send(());
    guard.join().expect("the guard thread");
    let stderr = on_terminal.join().expect("the terminal's reader");
    assert_eq!(status.code(), Some(128 + libc::SIGTERM), "{stderr}");
    assert_eq!(rest, "", "the program went on: {stderr}");
    let progress = " s on the emulator so far in for_hours<<<1, 32>>> at interrupted.cu:27 (main) (Ctrl-C stops it";
    let stopped =
        "racetrack: interrupted by SIGTERM during for_hours<<<1, 32>>> at interrupted.cu:27 (main)";
    let (drawn, erased) = (stderr.find(progress), stderr.rfind("\r\x1b[K"));
    let said = stderr.find(stopped);
    assert!(
        drawn.is_some() && erased.is_some() && said.is_some() && erased < said,
        "{stderr:?}"
    );
    assert!(
        stderr.contains("the program was ended by signal 15"),
        "{stderr}"
    );
    assert!(stderr.contains("racetrack: timings:"), "{stderr}");
    let findings = std::fs::read_to_string(&json).expect("the JSON findings");
    let findings: Value = serde_json::from_str(&findings).expect("JSON");
    let findings = findings["findings"].as_array().expect("a list");
    assert_eq!(findings.len(), 1, "{stderr}");
    assert!(names_line(&findings[0], 6), "{stderr}");
}

#[test]
fn what_cannot_be_built_or_run_is_one_line() {
    let dir = scratch().join("bad");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("static.cu"), "int main() { return 0; }\n").unwrap();
    let toolchain = harness::nvcc::require_nvcc().expect("nvcc");
    let exe = dir.join("static");
    let built = toolchain
        .command()
        .arg("-o")
        .arg(&exe)
        .arg(dir.join("static.cu"))
        .output()
        .expect("nvcc runs");
    assert!(
        built.status.success(),
        "{}",
        String::from_utf8_lossy(&built.stderr)
    );
    for (args, words) in [
        (vec![exe.to_str().unwrap().to_string()], "-cudart static"),
        (vec!["nothing.cu".to_string()], "no such file"),
        (
            vec!["-lcublas".to_string(), "static.cu".to_string()],
            "libcublas",
        ),
    ] {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let ran = racetrack_run(&dir, &args);
        assert_eq!(ran.code, 1, "{args:?}: {}", ran.stderr);
        assert!(ran.stderr.starts_with("error: "), "{}", ran.stderr);
        assert!(ran.stderr.contains(words), "{args:?}: {}", ran.stderr);
        assert_eq!(ran.stderr.trim_end().lines().count(), 1, "{}", ran.stderr);
    }
    std::fs::write(
        dir.join("typo.cu"),
        "int main() { return undefined_name; }\n",
    )
    .unwrap();
    let ran = racetrack_run(&dir, &["typo.cu"]);
    assert_eq!(ran.code, 1);
    assert!(
        ran.stderr.contains("nvcc could not build the program"),
        "{}",
        ran.stderr
    );
    assert!(ran.stderr.contains("typo.cu(1)"), "{}", ran.stderr);
}

/// What the book's emulator page shows: chapter 4's histogram as a whole program, its shared
/// counts bumped without atomics, reported at the kernel's line and the launch's.
#[test]
fn the_books_whole_program_report() {
    let dir = workspace_root().join("programs/ch4_atomics");
    let ran = racetrack_run(&dir, &["histogram_broken.cu", "--", "4096"]);
    assert_eq!(ran.code, 1, "{}", ran.stderr);
    insta::assert_snapshot!("histogram_broken_on_the_emulator", ran.stderr);
    insta::assert_snapshot!("histogram_broken_stdout", ran.stdout);
}

/// A failed device assert's message is the program's stderr, not its stdout, in a GPU's words;
/// the program's own output and exit code are what it makes of `cudaErrorAssert`.
#[test]
fn a_failed_device_assert_is_reported_on_the_programs_stderr() {
    let dir = workspace_root().join("harness/tests/run_programs");
    let log = scratch().join("run_cli-assert-log.txt");
    let _ = std::fs::remove_file(&log);
    let args = ["--log-file", log.to_str().unwrap(), "device_assert.cu"];
    let ran = racetrack_run(&dir, &args);
    assert_eq!(ran.code, 1, "{}", ran.stderr);
    assert_eq!(
        ran.stdout,
        "cudaErrorAssert: device-side assert triggered\n"
    );
    let message = ran.stderr.trim_end();
    assert!(
        message.ends_with(
            "device_assert.cu:10: void check_positive(const int *, int): block: [0,0,0], thread: [5,0,0] Assertion `values[i] > 0` failed."
        ),
        "{}",
        ran.stderr
    );
    assert_eq!(message.lines().count(), 1, "{}", ran.stderr);
    if gpus_here() >= 1 {
        let mut on_gpu = vec!["--backend", "cuda"];
        on_gpu.extend(args);
        let gpu = racetrack_run(&dir, &on_gpu);
        assert_eq!(gpu.stderr, ran.stderr, "the GPU's assert message differs");
    }
}

/// A long kernel is not a hang: `--step-budget` sets where a launch is stopped, and the stop
/// says so; without it the same program runs to its end.
#[test]
fn the_step_budget_is_the_users_to_set() {
    let dir = scratch().join("step_budget");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("long_loop.cu"),
        "#include <cstdio>\n\
         __global__ void spin(int *x, int n) { for (int i = 0; i < n; i++) x[threadIdx.x] += i; }\n\
         int main() {\n\
           int *x; cudaMalloc(&x, 32 * sizeof(int)); cudaMemset(x, 0, 32 * sizeof(int));\n\
           spin<<<1, 32>>>(x, 20000);\n\
           printf(\"%s\\n\", cudaGetErrorName(cudaDeviceSynchronize()));\n\
           return 0;\n\
         }\n",
    )
    .unwrap();
    let whole = racetrack_run(&dir, &["long_loop.cu"]);
    assert_eq!(whole.stdout, "cudaSuccess\n", "{}", whole.stderr);
    let stopped = racetrack_run(&dir, &["--step-budget", "50000", "long_loop.cu"]);
    assert_eq!(
        stopped.stdout, "cudaErrorLaunchFailure\n",
        "{}",
        stopped.stderr
    );
    assert!(
        stopped
            .stderr
            .contains("stopped by the step budget after 500")
            && stopped
                .stderr
                .contains("needs a larger budget (--step-budget"),
        "{}",
        stopped.stderr
    );
}

/// Registers, shared memory and launch bounds as an H100 counts them: `registers.cu` printed
/// `registers.h100.txt` on one (CUDA 13.0, driver 580, built with `-gencode
/// arch=compute_90,code=compute_90` and with `-arch=sm_90`, the same both ways), and the
/// emulator must print the same: occupancy, attributes, which launches fail and with what.
#[test]
fn registers_and_occupancy_are_an_h100s() {
    let dir = workspace_root().join("harness/tests/run_programs");
    let ran = racetrack_run(&dir, &["registers.cu"]);
    let h100 = std::fs::read_to_string(dir.join("registers.h100.txt")).unwrap();
    assert_eq!(ran.stdout, h100, "{}", ran.stderr);
}

/// A runtime call Racetrack carries but does not emulate yet names itself and its line once,
/// returns `cudaErrorNotSupported` (as the last error too), and leaves the program to go on: its
/// output before and after is all there, and it exits with its own code.
#[test]
fn a_call_not_emulated_names_its_line_and_returns_not_supported() {
    let dir = workspace_root().join("harness/tests/run_not_emulated");
    let source = std::fs::read_to_string(dir.join("texture_array.cu")).unwrap();
    let ran = racetrack_run(&dir, &["texture_array.cu"]);
    assert_eq!(ran.code, 3, "{}", ran.stderr);
    assert_eq!(
        ran.stdout,
        "kernel ran\ncudaMallocArray: cudaErrorNotSupported\ncudaMallocArray: cudaErrorNotSupported\n\
         last error: cudaErrorNotSupported\nand after: cudaSuccess\ncudaMemcpy3D: cudaErrorNotSupported\n",
        "{}",
        ran.stderr
    );
    assert!(
        ran.stderr.contains(
            "racetrack: this program calls cudaMallocArray, cudaMemcpy3D that Racetrack's runtime does not emulate yet"
        ),
        "{}",
        ran.stderr
    );
    for (call, marker) in [
        ("cudaMallocArray", "// NOT EMULATED: array"),
        ("cudaMemcpy3D", "// NOT EMULATED: copy"),
    ] {
        let line = line_of_marker(&source, marker).unwrap();
        let said =
            format!("racetrack: {call} at texture_array.cu:{line} (main) is not emulated yet");
        assert_eq!(
            ran.stderr.matches(&said).count(),
            1,
            "{said}\n{}",
            ran.stderr
        );
    }
    assert!(ran.findings.is_empty(), "not a bug of the program's");
}
