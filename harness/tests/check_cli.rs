//! `racetrack check` end to end: the built binary on ch4 and corpus kernels, on the emulator,
//! and every kind of bad input refused with one line and exit status 1.

use std::path::{Path, PathBuf};

use harness::kernel::line_of_marker;
use harness::ptx::workspace_root;
use harness::testing::run_binary_in;
use serde_json::Value;

struct Run {
    code: i32,
    stdout: String,
    stderr: String,
}

fn racetrack_in(dir: &Path, args: &[&str]) -> Run {
    let output = run_binary_in(env!("CARGO_BIN_EXE_racetrack"), dir, args);
    Run {
        code: output.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    }
}

fn racetrack(args: &[&str]) -> Run {
    racetrack_in(&workspace_root(), args)
}

fn bug_line(path: &str) -> u32 {
    let source = std::fs::read_to_string(workspace_root().join(path)).expect("kernel source");
    line_of_marker(&source, "// BUG:").expect("a // BUG: line")
}

/// A bad input: exit 1, and stderr is `error: …` on one line, without a panic.
fn assert_refused(run: &Run, expected: &str) {
    assert_eq!(
        run.code, 1,
        "stdout:\n{}\nstderr:\n{}",
        run.stdout, run.stderr
    );
    assert!(run.stderr.starts_with("error: "), "{}", run.stderr);
    assert!(
        run.stderr.contains(expected),
        "wanted `{expected}` in:\n{}",
        run.stderr
    );
    assert!(!run.stderr.contains("panicked"), "{}", run.stderr);
    assert!(run.stdout.is_empty(), "{}", run.stdout);
}

fn assert_one_line(run: &Run) {
    assert_eq!(run.stderr.trim_end().lines().count(), 1, "{}", run.stderr);
}

fn scratch(name: &str, contents: &[u8]) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("check_cli");
    std::fs::create_dir_all(&dir).expect("scratch directory");
    let path = dir.join(name);
    std::fs::write(&path, contents).expect("scratch file");
    path
}

const RACY: &str = "kernels/ch4_atomics/01_racy_increment.cu";
const ATOMIC: &str = "kernels/ch4_atomics/02_atomic_increment.cu";

#[test]
fn racy_increment_reports_a_race_at_line_9_and_exits_2() {
    let run = racetrack(&[
        "check",
        RACY,
        "--entry",
        "racy_increment",
        "--grid",
        "10",
        "--block",
        "16",
        "--arg",
        "x:i32[1]=zeros",
        "--backend",
        "emu",
    ]);
    assert_eq!(run.code, 2, "{}\n{}", run.stdout, run.stderr);
    let mut lines = run.stdout.lines();
    assert_eq!(
        lines.next(),
        Some("backend: emu — ptx-emu, Racetrack's PTX emulator")
    );
    assert!(
        lines
            .next()
            .is_some_and(|l| l.starts_with("launch: racy_increment<<<10, 16>>> from kernels/"))
    );
    assert!(
        run.stdout.contains("race (") && run.stdout.contains("on global memory: x[0]"),
        "{}",
        run.stdout
    );
    assert!(run.stdout.contains(&format!("{RACY}:9")), "{}", run.stdout);
    assert_eq!(bug_line(RACY), 9);
    assert!(
        run.stdout.contains("x (arg 0, i32[1]): ["),
        "{}",
        run.stdout
    );
    assert!(run.stderr.is_empty(), "{}", run.stderr);
}

/// `--threads` changes how many cores the emulator uses, never what it reports: one core and
/// two give the same text, findings, counts and buffers; zero cores is refused.
#[test]
fn threads_change_nothing_that_check_reports() {
    let run_with = |threads: &str| {
        racetrack(&[
            "check",
            RACY,
            "--entry",
            "racy_increment",
            "--grid",
            "10",
            "--block",
            "16",
            "--arg",
            "x:i32[1]=zeros",
            "--backend",
            "emu",
            "--json",
            "--threads",
            threads,
        ])
    };
    let one = run_with("1");
    let two = run_with("2");
    assert_eq!(one.code, 2, "{}\n{}", one.stdout, one.stderr);
    assert!(one.stdout.contains("race"), "{}", one.stdout);
    assert_eq!(one.stdout, two.stdout);
    assert_eq!((two.code, two.stderr.as_str()), (2, ""));
    let zero = run_with("0");
    assert_refused(&zero, "invalid value '0' for '--threads <N>'");
    assert_one_line(&zero);
}

/// `--engine` changes who runs the instructions, never what check reports: the interpreter and
/// the compiled tier give the same text, findings, counts and buffers; an unknown engine is
/// refused in one line.
#[test]
fn engines_change_nothing_that_check_reports() {
    let run_with = |engine: &str| {
        racetrack(&[
            "check",
            RACY,
            "--entry",
            "racy_increment",
            "--grid",
            "10",
            "--block",
            "16",
            "--arg",
            "x:i32[1]=zeros",
            "--backend",
            "emu",
            "--json",
            "--engine",
            engine,
        ])
    };
    let interp = run_with("interp");
    let compiled = run_with("compiled");
    assert_eq!(interp.code, 2, "{}\n{}", interp.stdout, interp.stderr);
    assert!(interp.stdout.contains("race"), "{}", interp.stdout);
    assert_eq!(interp.stdout, compiled.stdout);
    assert_eq!((compiled.code, compiled.stderr.as_str()), (2, ""));
    let unknown = run_with("jit");
    assert_refused(&unknown, "invalid value 'jit' for '--engine <ENGINE>'");
    assert_one_line(&unknown);
}

/// `racetrack check FILE ENTRY… --grid 10 --block 16 --arg i32[1]=zeros --backend BACKEND`: the
/// launch of `ATOMIC` that counts to 160.
fn count_to_160(file: &str, entry: &[&str], backend: &str) -> Run {
    let mut args = vec!["check", file];
    args.extend_from_slice(entry);
    args.extend([
        "--grid",
        "10",
        "--block",
        "16",
        "--arg",
        "i32[1]=zeros",
        "--backend",
        backend,
    ]);
    racetrack(&args)
}

/// `racetrack check FILE --backend emu --grid G --block B --arg …` for a scratch file.
fn check_on_emu(path: &Path, grid: u32, block: u32, args: &[&str]) -> Run {
    let (grid, block) = (grid.to_string(), block.to_string());
    let mut command = vec![
        "check",
        path.to_str().expect("a UTF-8 path"),
        "--backend",
        "emu",
        "--grid",
        &grid,
        "--block",
        &block,
    ];
    for arg in args {
        command.extend(["--arg", arg]);
    }
    racetrack(&command)
}

/// Also with `--entry` left out: the file's only kernel runs, and the report is the same.
#[test]
fn atomic_increment_counts_160_and_exits_0() {
    let launch = |file: &str, entry: &[&str]| count_to_160(file, entry, "emu");
    let run = launch(ATOMIC, &["--entry", "atomic_increment"]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    assert!(run.stdout.contains("nothing found"), "{}", run.stdout);
    assert!(
        run.stdout
            .contains("x (arg 0, i32[1]): [160]\n  sum 160, min 160, max 160"),
        "{}",
        run.stdout
    );
    let unnamed = launch(ATOMIC, &[]);
    assert_eq!(
        (unnamed.code, &unnamed.stdout),
        (0, &run.stdout),
        "{}",
        unnamed.stderr
    );
    // A file with several kernels, or one template, is refused with the names to choose from.
    let refused: [(&str, &[u8], &str); 2] = [
        (
            "two_kernels.cu",
            b"__global__ void first(int *x) { x[0] = 1; }\n__global__ void second(int *x) { x[0] = 2; }\n",
            "has 2 kernels; name the one to launch with --entry: it defines first and second",
        ),
        (
            "one_template.cu",
            b"template <typename T, int BLOCK>\n__global__ void fill(T *x) { x[threadIdx.x % BLOCK] = T(1); }\n",
            "defines one kernel, the template fill<T, BLOCK>: name an instance with --entry, e.g. --entry 'fill<float, 256>'",
        ),
    ];
    for (name, source, expected) in refused {
        let file = scratch(name, source);
        let run = launch(file.to_str().expect("a UTF-8 path"), &[]);
        assert_refused(&run, expected);
        assert_one_line(&run);
    }
}

/// A template and its explicit instantiation are one kernel: with `--entry` left out its only
/// instance runs; with two instances the refusal names both as C++ does.
#[test]
fn a_template_instantiated_once_needs_no_entry() {
    const TEMPLATE: &str =
        "template <typename T>\n__global__ void add_one(T *x) { atomicAdd(x, T(1)); }\n";
    let once = scratch(
        "instantiated_once.cu",
        format!("{TEMPLATE}template __global__ void add_one<int>(int *);\n").as_bytes(),
    );
    let run = count_to_160(once.to_str().expect("a UTF-8 path"), &[], "emu");
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    assert!(
        run.stdout.contains("launch: add_one<int><<<10, 16>>>"),
        "{}",
        run.stdout
    );
    assert!(run.stdout.contains("[160]"), "{}", run.stdout);
    let twice = scratch(
        "instantiated_twice.cu",
        format!(
            "{TEMPLATE}template __global__ void add_one<int>(int *);\ntemplate __global__ void add_one<unsigned int>(unsigned int *);\n"
        )
        .as_bytes(),
    );
    let run = count_to_160(twice.to_str().expect("a UTF-8 path"), &[], "emu");
    assert_refused(
        &run,
        "has 2 kernels; name the one to launch with --entry: it defines add_one<int> and add_one<unsigned int>",
    );
    assert_one_line(&run);
}

/// An unguarded `v[i] = v[i] * a;` past the end reads and writes outside `v`: both are named,
/// each with its own count, not the read alone with the write's times added to it.
#[test]
fn a_read_and_a_write_past_the_end_on_one_line_are_two_findings() {
    let path = scratch(
        "scale_no_guard.cu",
        b"extern \"C\" __global__ void scale(float *v, float a)\n{\n    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;\n    v[i] = v[i] * a;\n}\n",
    );
    let run = check_on_emu(&path, 4, 32, &["f32[100]=const:1", "f32=2"]);
    assert_eq!(run.code, 2, "{}\n{}", run.stdout, run.stderr);
    let past_the_end = run
        .stdout
        .matches("out-of-bounds access to global memory: v[100]")
        .count();
    assert_eq!(past_the_end, 2, "{}", run.stdout);
    assert!(
        run.stdout.contains("  read: block (3,0,0) thread (4,0,0)"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains("  write: block (3,0,0) thread (4,0,0)"),
        "{}",
        run.stdout
    );
    // 28 threads past the end, each reading once and writing once.
    assert_eq!(
        run.stdout.matches("seen 28 times").count(),
        2,
        "{}",
        run.stdout
    );
}

/// An index past one shared array lands in the next one, inside the block's shared memory: a
/// GPU's memcheck sees nothing there, and racecheck would name the neighbour at a line that
/// writes the first. It is reported as an access past the first array's end, naming where it
/// would land.
#[test]
fn an_index_past_one_shared_array_into_the_next_is_past_the_end_of_the_first() {
    let path = scratch(
        "shared_spill.cu",
        b"extern \"C\" __global__ void spill(float *out)\n{\n    __shared__ float first[32];\n    __shared__ float second[32];\n    unsigned int t = threadIdx.x;\n    second[t % 32] = 2.0f;\n    first[t] = 1.0f;\n    __syncthreads();\n    out[t] = first[t % 32] + second[t % 32];\n}\n",
    );
    let run = check_on_emu(&path, 1, 64, &["f32[64]=zeros"]);
    assert_eq!(run.code, 2, "{}\n{}", run.stdout, run.stderr);
    assert!(
        run.stdout.contains(
            "out-of-bounds access to shared memory: first[32] (just past the end of first, which has 128 bytes)"
        ),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains("it would overwrite second[0]"),
        "{}",
        run.stdout
    );
    // The write was dropped, so no race on `second` is left to name the wrong array.
    assert!(!run.stdout.contains("a race"), "{}", run.stdout);
}

/// A shared array of a template's type, sized by a header's constant, is reported by C indices.
#[test]
fn a_template_s_shared_array_sized_in_a_header_gets_c_indices() {
    scratch("tile_size.h", b"#pragma once\nconstexpr int TILE = 16;\n");
    let file = scratch(
        "transpose_tiled.cu",
        b"#include \"tile_size.h\"\n\
template <typename T>\n\
__global__ void transpose_tiled(T *out, const T *in, int n)\n\
{\n\
    __shared__ T tile[TILE][TILE];\n\
    tile[threadIdx.y][threadIdx.x] = in[threadIdx.y * n + threadIdx.x];\n\
    out[threadIdx.y * n + threadIdx.x] = tile[threadIdx.x][threadIdx.y];\n\
}\n\
template __global__ void transpose_tiled<float>(float *, const float *, int);\n",
    );
    let run = racetrack(&[
        "check",
        file.to_str().expect("a UTF-8 path"),
        "--grid",
        "1",
        "--block",
        "16,16",
        "--arg",
        "out:f32[256]=zeros",
        "--arg",
        "in:f32[256]=iota",
        "--arg",
        "i32=16",
        "--backend",
        "emu",
    ]);
    assert_eq!(run.code, 2, "{}\n{}", run.stdout, run.stderr);
    assert!(
        run.stdout
            .contains("race (read-after-write) on shared memory: tile[1][0]"),
        "{}",
        run.stdout
    );
}

#[test]
fn json_output_parses_and_names_the_finding_lines() {
    let run = racetrack(&[
        "check",
        RACY,
        "--entry",
        "racy_increment",
        "--grid",
        "10",
        "--block",
        "16",
        "--arg",
        "x:i32[1]=zeros",
        "--backend",
        "emu",
        "--json",
    ]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    let report: Value = serde_json::from_str(&run.stdout).expect("one JSON object");
    assert_eq!(report["backend"], "emu");
    assert!(
        report["device"]
            .as_str()
            .is_some_and(|d| d.starts_with("ptx-emu"))
    );
    assert_eq!(report["launch"]["entry"], "racy_increment");
    assert_eq!(report["launch"]["grid"], serde_json::json!([10, 1, 1]));
    assert_eq!(report["finished"], true);
    let findings = report["findings"].as_array().expect("findings");
    assert!(!findings.is_empty());
    for finding in findings {
        assert_eq!(finding["kind"], "race");
        assert_eq!(finding["lines"], serde_json::json!([9]));
        assert_eq!(finding["location"], "x[0]");
        assert!(
            finding["message"]
                .as_str()
                .is_some_and(|m| m.contains(&format!("{RACY}:9")))
        );
    }
    let buffers = report["buffers"].as_array().expect("buffers");
    assert_eq!(buffers.len(), 1);
    assert_eq!(buffers[0]["label"], "x");
    let x = buffers[0]["data"][0].as_i64().expect("x[0]");
    assert!(
        x > 0 && x < 160,
        "lost updates leave fewer than 160, got {x}"
    );
}

fn cpu_histogram(text: &[u8]) -> Vec<u64> {
    let mut bins = vec![0; 128];
    for &byte in text.iter().filter(|&&byte| byte < 128) {
        bins[usize::from(byte)] += 1;
    }
    bins
}

#[test]
fn file_input_and_show_print_the_histogram_the_cpu_counts() {
    let text: Vec<u8> = (0..5000u32)
        .map(|i| b"the quick brown fox \xc3\xa9"[(i * 7 % 22) as usize])
        .collect();
    let path = scratch("fox.txt", &text);
    let path = path.to_str().expect("UTF-8 scratch path");
    let n = format!("n:u32={}", text.len());
    let file = format!("text:u8[]=file:{path}");
    let run = racetrack(&[
        "check",
        "kernels/ch4_atomics/05_histogram_shared.cu",
        "--entry",
        "histogram_shared",
        "--grid",
        "3",
        "--block",
        "96",
        "--arg",
        &file,
        "--arg",
        &n,
        "--arg",
        "histo:u32[128]=zeros",
        "--show",
        "2",
        "--backend",
        "emu",
        "--json",
    ]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    let report: Value = serde_json::from_str(&run.stdout).expect("JSON");
    let buffers = report["buffers"].as_array().expect("buffers");
    assert_eq!(buffers.len(), 1, "--show 2 shows only the histogram");
    assert_eq!(buffers[0]["label"], "histo");
    let got: Vec<u64> = buffers[0]["data"]
        .as_array()
        .expect("data")
        .iter()
        .filter_map(Value::as_u64)
        .collect();
    assert_eq!(got, cpu_histogram(&text));
    assert_eq!(report["launch"]["args"][0]["spec"], file.as_str());
}

#[test]
fn named_buffers_name_the_race_in_the_histogram_without_atomics() {
    let path = "kernels/ch4_atomics/04_histogram_no_atomics.cu";
    let run = racetrack(&[
        "check",
        path,
        "--entry",
        "histogram_no_atomics",
        "--grid",
        "4",
        "--block",
        "64",
        "--arg",
        "text:u8[3000]=random:7",
        "--arg",
        "u32=3000",
        "--arg",
        "histo:u32[128]=zeros",
        "--backend",
        "emu",
    ]);
    assert_eq!(run.code, 2, "{}\n{}", run.stdout, run.stderr);
    assert!(
        run.stdout.contains("on global memory: histo["),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains(&format!("{path}:{}", bug_line(path))),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains("text (arg 0, u8[3000]): ["),
        "{}",
        run.stdout
    );
}

#[test]
fn barrier_divergence_is_a_finding_on_the_emulator() {
    let path = "emu/tests/corpus/sync_in_if.cu";
    let run = racetrack(&[
        "check",
        path,
        "--entry",
        "sync_in_if",
        "--grid",
        "2",
        "--block",
        "128",
        "--shared",
        "512",
        "--arg",
        "f32[256]=random:1",
        "--arg",
        "out:f32[2]=zeros",
        "--arg",
        "i32=256",
        "--backend",
        "emu",
    ]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(run.stdout.contains("barrier divergence"), "{}", run.stdout);
    assert!(
        run.stdout.contains(&format!("{path}:{}", bug_line(path))),
        "{}",
        run.stdout
    );
}

#[test]
fn a_run_past_the_timeout_is_an_error() {
    let run = racetrack(&[
        "check",
        "emu/tests/corpus/spin_forever.cu",
        "--entry",
        "spin_forever",
        "--grid",
        "4",
        "--block",
        "64",
        "--arg",
        "i32[1]=zeros",
        "--backend",
        "emu",
        "--timeout",
        "0.05",
    ]);
    // The watchdog may fire before or after the banner reaches stdout; what matters is the
    // exit status and the one-line reason.
    assert_eq!(
        run.code, 1,
        "stdout:\n{}\nstderr:\n{}",
        run.stdout, run.stderr
    );
    assert!(
        run.stderr
            .starts_with("error: spin_forever did not finish within 0.05 s (--timeout)"),
        "{}",
        run.stderr
    );
    assert!(!run.stderr.contains("panicked"), "{}", run.stderr);
    assert_one_line(&run);
}

#[test]
fn a_launch_larger_than_the_step_budget_says_how_to_raise_it() {
    let path = "emu/tests/corpus/reduce_better.cu";
    let with_budget = |budget: &str| {
        racetrack(&[
            "check",
            path,
            "--entry",
            "reduce_better",
            "--grid",
            "4",
            "--block",
            "1024",
            "--arg",
            "f32[4096]=const:1",
            "--arg",
            "u32=4096",
            "--arg",
            "partial:f32[4]=zeros",
            "--backend",
            "emu",
            "--step-budget",
            budget,
        ])
    };
    let cut_short = with_budget("10000");
    assert_eq!(cut_short.code, 2, "{}", cut_short.stderr);
    assert!(
        cut_short.stdout.contains("step budget exhausted")
            && cut_short.stdout.contains("raise --step-budget"),
        "{}",
        cut_short.stdout
    );
    let enough = with_budget("1000000");
    assert_eq!(enough.code, 0, "{}\n{}", enough.stdout, enough.stderr);
    assert!(
        enough.stdout.contains("[1024, 1024, 1024, 1024]"),
        "{}",
        enough.stdout
    );
}

#[test]
fn checkers_can_be_turned_off_and_schedules_chosen() {
    let run = racetrack(&[
        "check",
        RACY,
        "--entry",
        "racy_increment",
        "--grid",
        "2",
        "--block",
        "32",
        "--arg",
        "i32[1]=zeros",
        "--backend",
        "emu",
        "--no-racecheck",
        "--schedule",
        "adversarial",
        "--seed",
        "3",
    ]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    assert!(
        run.stdout.contains(
            "checkers: synccheck, memcheck, initcheck (adversarial schedule, seed 3): nothing found"
        ),
        "{}",
        run.stdout
    );
}

#[test]
fn bad_inputs_are_one_line_errors_with_exit_1() {
    let with = |grid: &str, block: &str, extra: &[&str]| {
        let mut args = vec![
            "check",
            ATOMIC,
            "--entry",
            "atomic_increment",
            "--backend",
            "emu",
            "--grid",
            grid,
            "--block",
            block,
        ];
        args.extend_from_slice(extra);
        racetrack(&args)
    };
    let cases: [(&str, &str, &[&str], &str); 7] = [
        (
            "10",
            "16",
            &["--arg", "i32[1]=zeros", "--arg", "u32=1"],
            "atomic_increment takes 1 argument (int *x; PTX u64), but 2 --arg were given",
        ),
        (
            "10",
            "16",
            &[],
            "atomic_increment takes 1 argument (int *x; PTX u64), but 0 --arg were given",
        ),
        (
            "10",
            "16",
            &["--arg", "f32=1.5"],
            "--arg 0 (`f32=1.5`) does not fit parameter 0 of atomic_increment, `int *x`: it takes a pointer, to i32 elements; --arg i32[LEN]=zeros would fit",
        ),
        (
            "10",
            "16",
            &["--arg", "i32[1]=zeros", "--show", "1"],
            "--show 1: there is no argument 1: the 1 --arg given are numbered from 0",
        ),
        (
            "10",
            "16",
            &["--arg", "i32[]=file:/nonexistent/racetrack.bin"],
            "--arg 0 (`i32[]=file:/nonexistent/racetrack.bin`): cannot read",
        ),
        (
            "10",
            "2048",
            &["--arg", "i32[1]=zeros"],
            "block x is 2048, above the device's limit of 1024",
        ),
        (
            "0",
            "16",
            &["--arg", "i32[1]=zeros"],
            "every grid and block dimension must be at least 1",
        ),
    ];
    for (grid, block, extra, expected) in cases {
        let run = with(grid, block, extra);
        assert_refused(&run, expected);
        assert_one_line(&run);
    }
    let run = racetrack(&[
        "check",
        ATOMIC,
        "--entry",
        "atomic",
        "--grid",
        "1",
        "--block",
        "1",
        "--arg",
        "i32[1]=zeros",
    ]);
    assert_refused(
        &run,
        "has no kernel named `atomic`; it defines atomic_increment",
    );
    assert_one_line(&run);
    let run = racetrack(&[
        "check",
        "no/such.cu",
        "--entry",
        "k",
        "--grid",
        "1",
        "--block",
        "1",
    ]);
    assert_refused(&run, "cannot read no/such.cu");
    assert_one_line(&run);
}

#[test]
fn malformed_flags_exit_1_not_clap_s_2() {
    let base = [
        "check",
        ATOMIC,
        "--entry",
        "atomic_increment",
        "--backend",
        "emu",
    ];
    for (extra, expected) in [
        (
            ["--grid", "1", "--block", "16", "--arg", "u32[1=zeros"],
            "lacks its closing `]`",
        ),
        (
            [
                "--grid",
                "1,2,3,4",
                "--block",
                "16",
                "--arg",
                "u32[1]=zeros",
            ],
            "is not a launch dimension",
        ),
        (
            ["--grid", "1", "--block", "16", "--arg", "u8=300"],
            "`300` is not a u8",
        ),
        (
            ["--grid", "1", "--block", "16", "--step-budget", "0"],
            "--step-budget",
        ),
    ] {
        let mut args = base.to_vec();
        args.extend_from_slice(&extra);
        let run = racetrack(&args);
        assert_refused(&run, expected);
    }
    let help = racetrack(&["check", "--help"]);
    assert_eq!(help.code, 0);
    assert!(
        help.stdout
            .contains("2  the kernel ran and the emulator's checkers reported findings"),
        "{}",
        help.stdout
    );
}

#[test]
fn compile_errors_show_nvrtc_s_log_at_path_colon_line() {
    let path = scratch(
        "undefined_name.cu",
        b"extern \"C\" __global__ void k(int *x)\n{\n    x[0] = y;\n}\n",
    );
    let dir = path.parent().expect("scratch directory");
    let run = racetrack_in(
        dir,
        &[
            "check",
            "undefined_name.cu",
            "--entry",
            "k",
            "--grid",
            "1",
            "--block",
            "1",
            "--arg",
            "i32[1]=zeros",
            "--backend",
            "emu",
        ],
    );
    assert_refused(
        &run,
        "undefined_name.cu does not compile (NVRTC's log follows):",
    );
    assert!(
        run.stderr
            .contains("undefined_name.cu:3: error: identifier \"y\" is undefined"),
        "{}",
        run.stderr
    );
}

#[test]
fn the_cuda_backend_runs_without_checkers_or_says_why_it_cannot() {
    let run = count_to_160(ATOMIC, &["--entry", "atomic_increment"], "cuda");
    if harness::backend::cuda_driver_present() && run.code == 0 {
        assert!(run.stdout.starts_with("backend: cuda — "), "{}", run.stdout);
        assert!(run.stdout.contains("checkers: not run"), "{}", run.stdout);
        assert!(run.stdout.contains("[160]"), "{}", run.stdout);
    } else {
        eprintln!("no GPU here: checking the refusal instead");
        assert_eq!(run.code, 1, "{}\n{}", run.stdout, run.stderr);
        assert!(run.stderr.starts_with("error: "), "{}", run.stderr);
        assert_one_line(&run);
    }
}

#[test]
fn device_printf_is_shown_in_text_and_json() {
    let label = scratch("printf_label.bin", b"val\0");
    let label_arg = format!("label:u8[]=file:{}", label.display());
    let args = |json: bool| {
        let mut args = vec![
            "check",
            "emu/tests/corpus/printf_formats.cu",
            "--entry",
            "printf_formats",
            "--grid",
            "2",
            "--block",
            "4",
            "--arg",
            "values:f32[6]=iota",
            "--arg",
            label_arg.as_str(),
            "--arg",
            "i32=6",
            "--backend",
            "emu",
        ];
        if json {
            args.push("--json");
        }
        racetrack(&args)
    };
    let text = args(false);
    assert_eq!(text.code, 0, "{}\n{}", text.stdout, text.stderr);
    assert!(
        text.stdout
            .contains("printf output (6 lines):\n  val[000] =    0.000 |"),
        "{}",
        text.stdout
    );
    assert!(
        text.stdout
            .contains("\n  val[005] =    5.000 | 5.000000e-05 | 5e+06 |"),
        "{}",
        text.stdout
    );
    let json = args(true);
    assert_eq!(json.code, 0, "{}", json.stderr);
    let report: Value = serde_json::from_str(&json.stdout).expect("one JSON object");
    let lines = report["printf"].as_array().expect("printf lines");
    assert_eq!(lines.len(), 6, "{report}");
    assert!(
        lines[2]
            .as_str()
            .is_some_and(|l| l.starts_with("val[002] =    2.000")),
        "{report}"
    );
    assert_eq!(report["printf_dropped"], 0);
}

#[test]
fn a_failed_assert_is_a_finding_with_the_gpu_message_and_exits_2() {
    let path = "emu/tests/corpus/assert_positive.cu";
    let run = racetrack(&[
        "check",
        path,
        "--entry",
        "assert_positive",
        "--grid",
        "1",
        "--block",
        "4",
        "--arg",
        "in:i32[4]=random:3",
        "--arg",
        "out:i32[4]=zeros",
        "--arg",
        "i32=4",
        "--backend",
        "emu",
        "--json",
    ]);
    assert_eq!(run.code, 2, "{}\n{}", run.stdout, run.stderr);
    let report: Value = serde_json::from_str(&run.stdout).expect("one JSON object");
    let finding = &report["findings"][0];
    assert_eq!(finding["kind"], "assertion-failed", "{report}");
    assert_eq!(
        finding["lines"],
        serde_json::json!([bug_line(path)]),
        "{report}"
    );
    assert_eq!(report["finished"], false, "{report}");
    let printed = report["printf"][0].as_str().unwrap_or_default();
    assert!(
        printed.starts_with(&format!(
            "{path}:{}: void assert_positive(const int *, int *, int): block: [0,0,0], thread: [",
            bug_line(path)
        )) && printed.ends_with("Assertion `in[i] >= 0` failed."),
        "{report}"
    );
}

#[test]
fn a_spinning_kernel_is_reported_stuck_within_seconds() {
    let start = std::time::Instant::now();
    let run = racetrack(&[
        "check",
        "emu/tests/corpus/spin_forever.cu",
        "--entry",
        "spin_forever",
        "--grid",
        "40",
        "--block",
        "256",
        "--arg",
        "i32[1]=zeros",
        "--backend",
        "emu",
    ]);
    assert_eq!(run.code, 2, "{}\n{}", run.stdout, run.stderr);
    assert!(
        run.stdout
            .contains("stuck: the kernel stopped making progress"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout
            .contains("10240 threads running at emu/tests/corpus/spin_forever.cu:8"),
        "{}",
        run.stdout
    );
    assert!(start.elapsed().as_secs() < 20, "took {:?}", start.elapsed());
}

const ACCUMULATE: &str = "emu/tests/corpus/accumulate_into_output.cu";

fn accumulate(out_fill: &str, extra: &[&str]) -> Run {
    let out = format!("out:f32[64]={out_fill}");
    let mut args = vec![
        "check",
        ACCUMULATE,
        "--entry",
        "accumulate_into_output",
        "--grid",
        "2",
        "--block",
        "32",
        "--arg",
        "x:f32[64]=iota",
        "--arg",
        &out,
        "--arg",
        "n:i32=64",
        "--backend",
        "emu",
    ];
    args.extend_from_slice(extra);
    racetrack(&args)
}

#[test]
fn an_uninit_buffer_read_before_it_is_written_is_an_initcheck_finding() {
    let line = bug_line(ACCUMULATE);
    let run = accumulate("uninit", &[]);
    assert_eq!(run.code, 2, "{}\n{}", run.stdout, run.stderr);
    // The book's "Checking your own kernel" shows this report.
    insta::assert_snapshot!("uninit_output_on_the_emulator", run.stdout);
    assert!(
        run.stdout.contains(
            "checkers: racecheck, synccheck, memcheck, initcheck (hardware schedule): 1 finding"
        ),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout
            .contains("uninitialized read of global memory: out[0]\n  read: block (0,0,0) thread (0,0,0) at emu/tests/corpus/accumulate_into_output.cu:")
            && run.stdout.contains(&format!("accumulate_into_output.cu:{line}\n")),
        "{}",
        run.stdout
    );
    assert!(run.stdout.contains("seen 64 times"), "{}", run.stdout);

    let help = racetrack(&["check", "--help"]);
    assert!(
        help.stdout
            .contains("uninit        allocated and never written"),
        "{}",
        help.stdout
    );

    let json = accumulate("uninit", &["--json"]);
    assert_eq!(json.code, 2, "{}", json.stderr);
    let report: Value = serde_json::from_str(&json.stdout).expect("--json prints JSON");
    let findings = report["findings"].as_array().expect("findings");
    assert_eq!(findings.len(), 1, "{}", json.stdout);
    assert_eq!(findings[0]["kind"], "uninitialized-read", "{}", json.stdout);
    assert_eq!(findings[0]["space"], "global", "{}", json.stdout);
    assert_eq!(report["checkers"]["initcheck"], true, "{}", json.stdout);

    // Written first (zeros), or with initcheck off: nothing to report.
    let zeros = accumulate("zeros", &[]);
    assert_eq!(zeros.code, 0, "{}\n{}", zeros.stdout, zeros.stderr);
    let off = accumulate("uninit", &["--no-initcheck"]);
    assert_eq!(off.code, 0, "{}\n{}", off.stdout, off.stderr);
    assert!(
        off.stdout.contains(
            "checkers: racecheck, synccheck, memcheck (hardware schedule): nothing found"
        ),
        "{}",
        off.stdout
    );
}

#[test]
fn a_grid_beyond_sixteen_million_threads_runs_on_the_emulator() {
    // 16,385 × 1,024 threads: one block more than the 2^24 threads the emulator once refused.
    // Blocks run in waves of resident ones, so any legal grid fits; this one stays quick because
    // all but four threads return at once (emu/BENCHMARK.md measures 65,535 × 1,024 in full).
    let run = racetrack(&[
        "check",
        "emu/tests/corpus/saxpy.cu",
        "--entry",
        "saxpy",
        "--grid",
        "16385",
        "--block",
        "1024",
        "--arg",
        "a:f32=2",
        "--arg",
        "x:f32[4]=iota",
        "--arg",
        "y:f32[4]=zeros",
        "--arg",
        "n:i32=4",
        "--backend",
        "emu",
    ]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    assert!(
        run.stdout
            .contains("(16385 blocks × 1024 threads: 16778240 threads)"),
        "{}",
        run.stdout
    );
    assert!(run.stdout.contains("nothing found"), "{}", run.stdout);
    assert!(
        run.stdout.contains("y (arg 2, f32[4]): [0, 2, 4, 6]"),
        "{}",
        run.stdout
    );
}

/// The C++ declaration decides: a `u32` buffer for `const unsigned char *text`, an `i32` for
/// `unsigned int n`, each refused in one line that names the parameter and an `--arg` that fits.
#[test]
fn arguments_of_another_c_type_are_refused_with_one_that_fits() {
    let path = "kernels/ch4_atomics/04_histogram_no_atomics.cu";
    let with = |text: &str, n: &str| {
        racetrack(&[
            "check",
            path,
            "--entry",
            "histogram_no_atomics",
            "--grid",
            "1",
            "--block",
            "32",
            "--arg",
            text,
            "--arg",
            n,
            "--arg",
            "histo:u32[128]=zeros",
            "--backend",
            "emu",
        ])
    };
    let run = with("text:u32[3000]=random:7", "u32=3000");
    // The book's emulator page shows this one.
    insta::assert_snapshot!("argument_of_another_c_type", run.stderr);
    assert_refused(
        &run,
        "--arg 0 (`text:u32[3000]=random:7`) does not fit parameter 0 of histogram_no_atomics, `const unsigned char *text`: it takes a pointer, to u8 elements; --arg text:u8[3000]=random:7 would fit",
    );
    assert_one_line(&run);
    let run = with("text:u8[3000]=random:7", "i32=3000");
    assert_refused(
        &run,
        "--arg 1 (`i32=3000`) does not fit parameter 1 of histogram_no_atomics, `unsigned int n`: it takes a scalar u32; --arg u32=3000 would fit",
    );
    assert_one_line(&run);
    let run = with("text:u8[3000]=random:7", "u32=3000");
    assert_eq!(run.code, 2, "{}\n{}", run.stdout, run.stderr);
}

/// Barriers on both sides of `x[0]++` order nothing between two threads running it: the
/// report says what a barrier orders, and quotes the line under its `file:line`.
#[test]
fn barriers_around_a_statement_are_explained_by_what_they_order() {
    let path = scratch(
        "barriers_around.cu",
        b"extern \"C\" __global__ void bump(int *x)\n{\n    __syncthreads();\n    x[0]++;\n    __syncthreads();\n}\n",
    );
    let path = path.to_string_lossy();
    let run = racetrack(&[
        "check",
        &path,
        "--grid",
        "1",
        "--block",
        "64",
        "--arg",
        "x:i32[1]=zeros",
        "--backend",
        "emu",
    ]);
    assert_eq!(run.code, 2, "{}\n{}", run.stdout, run.stderr);
    assert!(
        run.stdout.contains(
            "both ran after the same __syncthreads() with none between them: a barrier orders what comes before it against what comes after it, not two threads running the same statement between barriers"
        ),
        "{}",
        run.stdout
    );
    assert!(
        !run.stdout
            .contains("no __syncthreads(), atomic or fence orders them"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains(&format!("{path}:4\n")),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains("\n       4 | x[0]++;\n"),
        "{}",
        run.stdout
    );
}

/// Threads that leave early are named at the line they left from, not at the closing brace
/// NVRTC puts the `ret` at.
#[test]
fn a_barrier_divergence_names_the_line_the_threads_left_from() {
    let source = "\
extern \"C\" __global__ void early(float *out, int n)
{
    __shared__ float s[64];
    unsigned int tid = threadIdx.x;
    if (tid >= n) return;
    s[tid] = tid;
    __syncthreads();
    out[tid] = s[(tid + 1) % n];
}
";
    let path = scratch("early_return.cu", source.as_bytes());
    let path = path.to_string_lossy();
    let run = racetrack(&[
        "check",
        &path,
        "--grid",
        "1",
        "--block",
        "64",
        "--arg",
        "out:f32[64]=zeros",
        "--arg",
        "i32=40",
        "--backend",
        "emu",
    ]);
    assert_eq!(run.code, 2, "{}\n{}", run.stdout, run.stderr);
    assert!(run.stdout.contains("barrier divergence"), "{}", run.stdout);
    assert!(
        run.stdout.contains(&format!(
            "exited without arriving (first exit) at {path}:5 "
        )),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains("       5 | if (tid >= n) return;"),
        "{}",
        run.stdout
    );
    assert!(!run.stdout.contains(&format!("{path}:9")), "{}", run.stdout);
}

/// A race on a 2D shared array names the element as C indexes it.
#[test]
fn a_two_dimensional_array_is_named_by_c_indices() {
    let source = "\
#define TILE 4
extern \"C\" __global__ void transpose_tile(float *out)
{
    __shared__ float t[TILE][TILE + 1];
    t[threadIdx.y][threadIdx.x] = threadIdx.x;
    out[threadIdx.y * TILE + threadIdx.x] = t[threadIdx.x][threadIdx.y];
}
";
    let path = scratch("transpose_tile.cu", source.as_bytes());
    let path = path.to_string_lossy();
    let run = racetrack(&[
        "check",
        &path,
        "--grid",
        "1",
        "--block",
        "4,4",
        "--arg",
        "out:f32[16]=zeros",
        "--backend",
        "emu",
    ]);
    assert_eq!(run.code, 2, "{}\n{}", run.stdout, run.stderr);
    let named = run
        .stdout
        .lines()
        .find(|line| line.contains("on shared memory: t["))
        .unwrap_or_else(|| panic!("no race on t:\n{}", run.stdout));
    let index = named.split("t[").nth(1).unwrap_or_default();
    assert!(index.contains("]["), "{named}");
}

/// An early `return` before a tile loop's barriers, in a kernel whose loop can also be skipped
/// (K = 0) on the way to its end: two branches could have jumped over the barriers, and the
/// divergence names the one the threads took, the `return`'s line, not the closing brace.
#[test]
fn a_divergence_names_the_return_the_threads_took() {
    let source = "#define TILE 16\n\
        extern \"C\" __global__ void tiled(const float *A, const float *B, float *C,\n\
                                          unsigned int M, unsigned int N, unsigned int K)\n\
        {\n\
            __shared__ float As[TILE][TILE];\n\
            __shared__ float Bs[TILE][TILE];\n\
            unsigned int tx = threadIdx.x, ty = threadIdx.y;\n\
            unsigned int row = blockIdx.y * TILE + ty, col = blockIdx.x * TILE + tx;\n\
            float sum = 0.0f;\n\
            if (row >= M || col >= N) return; // BUG: the threads past the edge leave the barriers\n\
            for (unsigned int t = 0; t < (K + TILE - 1) / TILE; ++t) {\n\
                As[ty][tx] = (t * TILE + tx < K) ? A[row * K + t * TILE + tx] : 0.0f;\n\
                Bs[ty][tx] = (t * TILE + ty < K) ? B[(t * TILE + ty) * N + col] : 0.0f;\n\
                __syncthreads();\n\
                for (unsigned int k = 0; k < TILE; ++k) sum += As[ty][k] * Bs[k][tx];\n\
                __syncthreads();\n\
            }\n\
            C[row * N + col] = sum;\n\
        }\n";
    let path = scratch("early_return_tiles.cu", source.as_bytes());
    let run = racetrack(&[
        "check",
        path.to_str().unwrap(),
        "--grid",
        "2,2",
        "--block",
        "16,16",
        "--arg",
        "f32[400]=iota",
        "--arg",
        "f32[400]=iota",
        "--arg",
        "f32[400]=zeros",
        "--arg",
        "u32=20",
        "--arg",
        "u32=20",
        "--arg",
        "u32=20",
        "--backend",
        "emu",
    ]);
    let line = line_of_marker(source, "// BUG:").expect("the return's line");
    assert!(run.stdout.contains("barrier divergence"), "{}", run.stdout);
    let exited = run
        .stdout
        .lines()
        .find(|l| l.contains("exited without arriving"))
        .unwrap_or_default();
    assert!(
        exited.contains(&format!("early_return_tiles.cu:{line} (e.g.")),
        "{}",
        run.stdout
    );
}

/// A whole program given to `check` without the launch restated (no `--grid`, no `--arg`s)
/// is refused on one line, and the next says that `racetrack run` takes it as it is.
#[test]
fn a_program_with_a_main_refused_before_its_launch_points_to_run() {
    let program = "programs/ch1_map/saxpy_broken.cu";
    for args in [
        vec!["check", program],
        vec!["check", program, "--grid", "1", "--block", "32"],
    ] {
        let run = racetrack(&args);
        assert_eq!(run.code, 1, "{args:?}: {}", run.stderr);
        // From an empty cache, the headers' fetch is said first.
        let lines: Vec<&str> = run.stderr.trim_end().lines().collect();
        assert!(
            lines.len() >= 2 && lines[lines.len() - 2].starts_with("error: "),
            "{args:?}: {}",
            run.stderr
        );
        assert_eq!(
            lines.last().copied(),
            Some(
                format!(
                    "note: {program} has a main: `cargo racetrack run {program}` runs it as it \
                     is, every launch checked"
                )
                .as_str()
            ),
            "{args:?}"
        );
    }
    let kernel_only = racetrack(&["check", RACY]);
    assert!(
        !kernel_only.stderr.contains("has a main"),
        "{}",
        kernel_only.stderr
    );
}
