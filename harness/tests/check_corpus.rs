//! `racetrack check` on CUDA as people write it: the files of `tests/check_corpus/` (C++ and
//! template kernels, a namespace, overloads, cooperative groups, cuda_fp16, the standard headers,
//! whole programs with host code, an include folder, macros), through the built binary on the
//! emulator, each with exact expectations. `corpus_backends.rs` runs the clean ones on a GPU too.

use std::path::{Path, PathBuf};

use harness::check::{ArgSpec, HostArg, HostData};
use harness::kernel::line_of_marker;
use harness::ptx::workspace_root;
use harness::testing::{require_cuda_headers, run_binary_in};
use serde_json::Value;

struct Run {
    code: i32,
    stdout: String,
    stderr: String,
}

fn corpus() -> PathBuf {
    workspace_root().join("harness/tests/check_corpus")
}

/// `racetrack check FILE ARGS… --backend emu`, run in the corpus folder so reports name the
/// file as `FILE:LINE`.
fn check(file: &str, args: &[&str]) -> Run {
    check_in(&corpus(), file, args)
}

fn check_in(dir: &Path, file: &str, args: &[&str]) -> Run {
    let mut all = vec!["check", file];
    all.extend(args);
    if !args.contains(&"--backend") {
        all.extend(["--backend", "emu"]);
    }
    let output = run_binary_in(env!("CARGO_BIN_EXE_racetrack"), dir, &all);
    Run {
        code: output.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    }
}

fn json(run: &Run) -> Value {
    assert_eq!(
        run.code, 0,
        "stdout:\n{}\nstderr:\n{}",
        run.stdout, run.stderr
    );
    serde_json::from_str(&run.stdout).unwrap_or_else(|e| panic!("{e}:\n{}", run.stdout))
}

/// The data of the buffer labelled `label` in a `--json` report, as f64s.
fn buffer(report: &Value, label: &str) -> Vec<f64> {
    report["buffers"]
        .as_array()
        .and_then(|buffers| buffers.iter().find(|b| b["label"] == label))
        .and_then(|b| b["data"].as_array())
        .unwrap_or_else(|| panic!("no buffer {label} in {report}"))
        .iter()
        .map(|v| v.as_f64().expect("a number"))
        .collect()
}

/// A bad input: exit 1 and one `error: …` line, said once.
fn assert_refused(run: &Run, expected: &str) {
    assert_eq!(
        run.code, 1,
        "stdout:\n{}\nstderr:\n{}",
        run.stdout, run.stderr
    );
    assert!(run.stdout.is_empty(), "{}", run.stdout);
    assert_eq!(run.stderr, format!("error: {expected}\n"));
}

fn bug_line(file: &str) -> u32 {
    let source = std::fs::read_to_string(corpus().join(file)).expect("corpus file");
    line_of_marker(&source, "// BUG:").expect("a // BUG: line")
}

/// The naive reduction tutorials start with: thread 0 of each block loops over its block's
/// slice while the block's other threads return at once (most warps of every block exit in
/// their first instructions). Each block's sum is exact, the last block's slice is cut short by
/// `n`, and no checker finds anything.
#[test]
fn a_reduction_by_one_thread_per_block_sums_every_slice() {
    let (blocks, threads, n) = (8u32, 64u32, 500u32);
    let run = check(
        "one_thread_block_sum.cu",
        &[
            "--grid",
            &blocks.to_string(),
            "--block",
            &threads.to_string(),
            "--arg",
            &format!("f32[{n}]=iota"),
            "--arg",
            &format!("out:f32[{blocks}]=zeros"),
            "--arg",
            &format!("i32={n}"),
            "--json",
        ],
    );
    let report = json(&run);
    assert_eq!(report["findings"], serde_json::json!([]));
    let expected: Vec<f64> = (0..blocks)
        .map(|b| {
            let start = b * threads;
            (start..(start + threads).min(n)).map(f64::from).sum()
        })
        .collect();
    assert_eq!(buffer(&report, "out"), expected);
}

#[test]
fn a_template_kernel_is_instantiated_by_its_source_name() {
    let run = check(
        "template_reduce.cu",
        &[
            "--entry",
            "block_sum<int, 128>",
            "--grid",
            "8",
            "--block",
            "128",
            "--arg",
            "i32[1000]=iota",
            "--arg",
            "out:i32[1]=zeros",
            "--arg",
            "i32=1000",
            "--json",
        ],
    );
    let report = json(&run);
    assert_eq!(report["launch"]["entry"], "block_sum<int, 128>");
    assert_eq!(report["findings"], serde_json::json!([]));
    assert_eq!(buffer(&report, "out"), [499_500.0]);
    let floats = check(
        "template_reduce.cu",
        &[
            "--entry",
            "block_sum<float, 256>",
            "--grid",
            "4",
            "--block",
            "256",
            "--arg",
            "f32[1000]=const:0.5",
            "--arg",
            "out:f32[1]=zeros",
            "--arg",
            "i32=1000",
            "--show",
            "out",
        ],
    );
    assert_eq!(floats.code, 0, "{}\n{}", floats.stdout, floats.stderr);
    assert!(
        floats
            .stdout
            .contains("launch: block_sum<float, 256><<<4, 256>>> from template_reduce.cu"),
        "{}",
        floats.stdout
    );
    assert!(
        floats
            .stdout
            .ends_with("out (arg 1, f32[1]): [500]\n  sum 500, min 500, max 500\n"),
        "{}",
        floats.stdout
    );
}

#[test]
fn a_race_in_a_template_kernel_names_its_line() {
    let file = "template_reduce_racy.cu";
    let run = check(
        file,
        &[
            "--entry",
            "block_sum<int, 128>",
            "--grid",
            "2",
            "--block",
            "128",
            "--arg",
            "i32[200]=iota",
            "--arg",
            "out:i32[1]=zeros",
            "--arg",
            "i32=200",
            "--json",
        ],
    );
    assert_eq!(run.code, 2, "{}\n{}", run.stdout, run.stderr);
    let report: Value = serde_json::from_str(&run.stdout).expect("JSON");
    let line = bug_line(file);
    let findings = report["findings"].as_array().expect("findings");
    assert!(!findings.is_empty());
    for finding in findings {
        assert_eq!(finding["kind"], "race");
        assert_eq!(finding["space"], "shared");
        assert!(
            finding["lines"]
                .as_array()
                .is_some_and(|lines| lines.contains(&Value::from(line))),
            "{finding}"
        );
    }
}

#[test]
fn a_namespaced_kernel_runs_by_its_qualified_name() {
    let run = check(
        "namespace_saxpy.cu",
        &[
            "--entry",
            "blas::saxpy",
            "--grid",
            "2",
            "--block",
            "64",
            "--arg",
            "i32=300",
            "--arg",
            "f32=2",
            "--arg",
            "f32[300]=iota",
            "--arg",
            "y:f32[300]=const:1",
            "--show",
            "y",
            "--json",
        ],
    );
    let report = json(&run);
    assert_eq!(report["launch"]["entry"], "blas::saxpy");
    let want: Vec<f64> = (0..300).map(|i| f64::from(2 * i + 1)).collect();
    assert_eq!(buffer(&report, "y"), want);
}

#[test]
fn overloads_are_listed_and_picked_by_parameter_types() {
    let common = ["--grid", "1", "--block", "64"];
    let ambiguous = check(
        "overloads.cu",
        &[&["--entry", "fill", "--arg", "i32[50]=zeros"][..], &common].concat(),
    );
    assert_refused(
        &ambiguous,
        "`fill` is overloaded in overloads.cu; name one by its parameter types: --entry 'fill(float*, float, int)' or --entry 'fill(int*, int, int)'",
    );
    let ints = check(
        "overloads.cu",
        &[
            &[
                "--entry",
                "fill(int*, int, int)",
                "--arg",
                "x:i32[50]=zeros",
                "--arg",
                "i32=7",
                "--arg",
                "i32=50",
                "--json",
            ][..],
            &common,
        ]
        .concat(),
    );
    let report = json(&ints);
    assert_eq!(report["launch"]["entry"], "fill(int*, int, int)");
    let want: Vec<f64> = (0..50).map(|i| f64::from(7 + i)).collect();
    assert_eq!(buffer(&report, "x"), want);
    let floats = check(
        "overloads.cu",
        &[
            &[
                "--entry",
                "fill(float *, float, int)",
                "--arg",
                "x:f32[50]=zeros",
                "--arg",
                "f32=2.5",
                "--arg",
                "i32=40",
                "--json",
            ][..],
            &common,
        ]
        .concat(),
    );
    let got = buffer(&json(&floats), "x");
    assert!(got[..40].iter().all(|&v| v == 2.5) && got[40..].iter().all(|&v| v == 0.0));
}

#[test]
fn names_that_are_not_one_kernel_say_what_to_write() {
    let base = ["--grid", "1", "--block", "1"];
    let run = |file: &str, entry: &str| check(file, &[&["--entry", entry][..], &base].concat());
    assert_refused(
        &run("template_reduce.cu", "block_sum"),
        "`block_sum` is a template (template <typename T, int BLOCK>); name an instance with its arguments, e.g. --entry 'block_sum<float, 256>'",
    );
    assert_refused(
        &run("namespace_saxpy.cu", "saxpy"),
        "namespace_saxpy.cu has no kernel named `saxpy`; it defines blas::saxpy",
    );
    assert_refused(
        &run("overloads.cu", "fill(double*, int)"),
        "no kernel `fill` of overloads.cu takes (double*, int); name one by its parameter types: --entry 'fill(float*, float, int)' or --entry 'fill(int*, int, int)'",
    );
    assert_refused(
        &run("overloads.cu", "fill<"),
        "`fill<` is not a kernel name; write NAME, ns::NAME, NAME<TEMPLATE ARGS> or NAME(PARAMETER TYPES)",
    );
}

#[test]
fn cooperative_groups_tiles_shuffles_and_reduce_run() {
    require_cuda_headers();
    let run = check(
        "coop_groups.cu",
        &[
            "--entry",
            "tile_sums",
            "--grid",
            "2",
            "--block",
            "128",
            "--arg",
            "i32[250]=iota",
            "--arg",
            "warps:i32[8]=zeros",
            "--arg",
            "blocks:i32[2]=zeros",
            "--arg",
            "i32=250",
            "--json",
        ],
    );
    let report = json(&run);
    assert_eq!(report["findings"], serde_json::json!([]));
    let sum = |range: std::ops::Range<i32>| f64::from(range.sum::<i32>());
    let warps: Vec<f64> = (0..8)
        .map(|w| sum(w * 32..(w * 32 + 32).min(250)))
        .collect();
    assert_eq!(buffer(&report, "warps"), warps);
    assert_eq!(buffer(&report, "blocks"), [sum(0..128), sum(128..250)]);
}

#[test]
fn grid_wide_sync_needs_a_cooperative_launch() {
    require_cuda_headers();
    let run = check(
        "coop_grid_sync.cu",
        &[
            "--entry",
            "grid_total",
            "--grid",
            "2",
            "--block",
            "32",
            "--arg",
            "i32[64]=iota",
            "--arg",
            "i32[2]=zeros",
        ],
    );
    assert_refused(
        &run,
        "grid_total synchronises the whole grid (cooperative_groups::this_grid().sync()), which needs a cooperative launch (cudaLaunchCooperativeKernel, every block resident at once); check launches kernels the ordinary way, where a GPU traps at that sync: split the kernel at the grid sync into two launches",
    );
}

#[test]
fn half_precision_kernels_take_and_show_numbers() {
    require_cuda_headers();
    let run = check(
        "half_axpy.cu",
        &[
            "--entry",
            "haxpy",
            "--grid",
            "1",
            "--block",
            "32",
            "--arg",
            "i32=20",
            "--arg",
            "a:f16=0.5",
            "--arg",
            "f16[20]=iota",
            "--arg",
            "y:f16[20]=const:1",
            "--show",
            "y",
        ],
    );
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    assert!(
        run.stdout.contains("  arg 1  a: f16=0.5\n"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.ends_with(
            "y (arg 3, f16[20]): [1, 1.5, 2, 2.5, 3, 3.5, 4, 4.5, 5, 5.5, 6, 6.5, 7, 7.5, 8, 8.5, … 4 more]\n  sum 115, min 1, max 10.5\n"
        ),
        "{}",
        run.stdout
    );
    let widened = json(&check(
        "half_axpy.cu",
        &[
            "--entry",
            "widen",
            "--grid",
            "1",
            "--block",
            "32",
            "--arg",
            "i32=20",
            "--arg",
            "f16[20]=random:5",
            "--arg",
            "out:f32[20]=zeros",
            "--json",
        ],
    ));
    let spec: ArgSpec = "f16[20]=random:5".parse().expect("spec");
    let Ok(HostArg::Buffer {
        data: HostData::F16(halves),
        ..
    }) = spec.resolve(1)
    else {
        panic!("an f16 buffer");
    };
    let want: Vec<f64> = halves.iter().map(|h| h.to_f64()).collect();
    assert_eq!(buffer(&widened, "out"), want);
    assert_eq!(
        buffer(&widened, "in"),
        want,
        "f16 buffers are shown as numbers"
    );
}

#[test]
fn standard_headers_have_stand_ins() {
    require_cuda_headers();
    let report = json(&check(
        "std_headers.cu",
        &[
            "--entry",
            "lengths",
            "--grid",
            "1",
            "--block",
            "32",
            "--arg",
            "f32[8]=iota",
            "--arg",
            "l:f32[4]=zeros",
            "--arg",
            "c:u32[4]=zeros",
            "--arg",
            "i32=4",
            "--json",
        ],
    ));
    let points = [(0.0f32, 1.0f32), (2.0, 3.0), (4.0, 5.0), (6.0, 7.0)];
    let lengths: Vec<f64> = points
        .iter()
        .map(|(x, y)| f64::from((x * x + y * y).sqrt()))
        .collect();
    assert_eq!(buffer(&report, "l"), lengths);
    let clamped: Vec<f64> = lengths
        .iter()
        .map(|&l| (l.trunc() * f64::from(i32::MAX)).min(f64::from(u32::MAX)))
        .collect();
    assert_eq!(buffer(&report, "c"), clamped);
}

#[test]
fn assert_from_the_cassert_stand_in_reports_as_a_gpu_prints_it() {
    let file = "assert_positive.cu";
    let line = bug_line(file);
    let run = check(
        file,
        &[
            "--entry",
            "check_positive",
            "--grid",
            "1",
            "--block",
            "32",
            "--arg",
            "i32[4]=const:-1",
            "--arg",
            "i32=4",
        ],
    );
    assert_eq!(run.code, 2, "{}\n{}", run.stdout, run.stderr);
    assert!(
        run.stdout.contains("  checking 4 values\n"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains(&format!(
            "  {file}:{line}: void check_positive(const int *, int): block: [0,0,0], thread: [3,0,0] Assertion `x[i] >= 0` failed.\n"
        )),
        "{}",
        run.stdout
    );
    let clean = check(
        file,
        &[
            "--entry",
            "check_positive",
            "--grid",
            "1",
            "--block",
            "32",
            "--arg",
            "i32[4]=iota",
            "--arg",
            "i32=4",
            "-D",
            "NDEBUG",
        ],
    );
    assert_eq!(clean.code, 0, "{}\n{}", clean.stdout, clean.stderr);
    let silenced = check(
        file,
        &[
            "--entry",
            "check_positive",
            "--grid",
            "1",
            "--block",
            "32",
            "--arg",
            "i32[4]=const:-1",
            "--arg",
            "i32=4",
            "-D",
            "NDEBUG",
        ],
    );
    assert_eq!(
        silenced.code, 0,
        "-D NDEBUG turns assert off: {}",
        silenced.stdout
    );
}

const WHOLE_PROGRAM_ARGS: [&str; 14] = [
    "--entry",
    "histogram<256>",
    "-I",
    "include",
    "--grid",
    "4",
    "--block",
    "256",
    "--arg",
    "text:u8[4096]=random:3",
    "--arg",
    "n:i32=4096",
    "--arg",
    "bins:u32[64]=zeros",
];

/// The byte histogram the whole-program files compute, on the CPU.
fn cpu_bins(bins: usize) -> Vec<f64> {
    let spec: ArgSpec = "u8[4096]=random:3".parse().expect("spec");
    let Ok(HostArg::Buffer {
        data: HostData::U8(text),
        ..
    }) = spec.resolve(0)
    else {
        panic!("a u8 buffer");
    };
    let mut counts = vec![0.0; bins];
    for byte in text {
        counts[usize::from(byte) % bins] += 1.0;
    }
    counts
}

#[test]
fn a_whole_program_runs_without_its_host_code_and_keeps_its_lines() {
    let file = "whole_program.cu";
    let run = check(file, &WHOLE_PROGRAM_ARGS);
    assert_eq!(run.code, 2, "{}\n{}", run.stdout, run.stderr);
    let host = run.stdout.lines().nth(2).unwrap_or_default();
    assert_eq!(
        host,
        "host code left out (NVRTC compiles device code only): #include <iostream> (line 9), #include <vector> (line 10), make_text (lines 27–34), main (lines 52–72); to choose yourself, wrap host code in #ifndef __CUDACC_RTC__ … #endif"
    );
    assert_eq!(
        run.stdout.lines().nth(3).unwrap_or_default(),
        "this file has a main: `cargo racetrack run whole_program.cu` runs it as it is, every launch checked"
    );
    assert!(
        run.stdout
            .contains(&format!("at {file}:{}", bug_line(file))),
        "{}",
        run.stdout
    );
    insta::assert_snapshot!("whole_program_on_the_emulator", run.stdout);
}

#[test]
fn the_guarded_program_is_clean_and_takes_macros() {
    let run = check("whole_program_guarded.cu", &WHOLE_PROGRAM_ARGS);
    let report = json(&check(
        "whole_program_guarded.cu",
        &[&WHOLE_PROGRAM_ARGS[..], &["--json"]].concat(),
    ));
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    assert!(!run.stdout.contains("host code"), "{}", run.stdout);
    assert_eq!(
        report["launch"]["host_code_left_out"],
        serde_json::json!([])
    );
    assert_eq!(buffer(&report, "bins"), cpu_bins(64));
    let mut args = WHOLE_PROGRAM_ARGS.to_vec();
    args[13] = "bins:u32[16]=zeros";
    args.extend(["-D", "BINS=16", "--json"]);
    let sixteen = json(&check("whole_program_guarded.cu", &args));
    assert_eq!(buffer(&sixteen, "bins"), cpu_bins(16));
}

#[test]
fn a_missing_include_folder_is_named_with_what_was_left_out() {
    let mut args = WHOLE_PROGRAM_ARGS[..2].to_vec();
    args.extend(&WHOLE_PROGRAM_ARGS[4..]);
    let without = check("whole_program_guarded.cu", &args);
    assert_eq!(without.code, 1, "{}", without.stdout);
    let source = std::fs::read_to_string(corpus().join("whole_program_guarded.cu")).expect("file");
    let include = line_of_marker(&source, "#include \"text_bins.h\"").expect("the include");
    assert!(
        without.stderr.starts_with(&format!(
            "error: whole_program_guarded.cu does not compile (NVRTC's log follows):\nwhole_program_guarded.cu:{include}: catastrophic error: cannot open source file \"text_bins.h\""
        )),
        "{}",
        without.stderr
    );
    assert!(
        without
            .stderr
            .contains("note: NVRTC looked for headers in . (the file's folder), ")
            && without.stderr.ends_with("; add a folder with -I DIR\n"),
        "{}",
        without.stderr
    );
    let unguarded = check("whole_program.cu", &args);
    assert_eq!(unguarded.code, 1);
    assert!(
        unguarded.stderr.contains(
            "note: NVRTC compiles device code only, so check left out #include <iostream> (line 9), #include <vector> (line 10), #include \"text_bins.h\" (line 16), make_text (lines 27–34), main (lines 52–72)"
        ),
        "{}",
        unguarded.stderr
    );
}

#[test]
fn an_unsupported_instruction_is_one_line_said_once() {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("check_corpus");
    std::fs::create_dir_all(&dir).expect("scratch directory");
    std::fs::write(
        dir.join("breakpoint.cu"),
        "__global__ void stop(int *x)\n{\n    asm volatile(\"brkpt;\");\n    x[0] = 1;\n}\n",
    )
    .expect("scratch file");
    let run = check_in(
        &dir,
        "breakpoint.cu",
        &[
            "--entry",
            "stop",
            "--grid",
            "1",
            "--block",
            "1",
            "--arg",
            "i32[1]=zeros",
        ],
    );
    assert_eq!(run.code, 1, "{}", run.stdout);
    assert!(
        run.stderr
            .starts_with("error: stop uses `brkpt` at breakpoint.cu:3 (PTX line ")
            && run.stderr.contains("which the emulator cannot run")
            && run.stderr.lines().count() == 1
            && run.stderr.matches("brkpt").count() == 1,
        "{}",
        run.stderr
    );
}

#[test]
fn std_picks_the_language_nvrtc_compiles() {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("check_corpus");
    std::fs::create_dir_all(&dir).expect("scratch directory");
    std::fs::write(
        dir.join("concepts.cu"),
        "template <typename T>\n    requires(sizeof(T) == 4)\n__global__ void twice(T *x)\n{\n    x[threadIdx.x] *= 2;\n}\n",
    )
    .expect("scratch file");
    let with = |std: &str| {
        check_in(
            &dir,
            "concepts.cu",
            &[
                "--entry",
                "twice<int>",
                "--grid",
                "1",
                "--block",
                "4",
                "--arg",
                "x:i32[4]=iota",
                "--std",
                std,
            ],
        )
    };
    let cpp20 = with("c++20");
    assert_eq!(cpp20.code, 0, "{}\n{}", cpp20.stdout, cpp20.stderr);
    assert!(
        cpp20.stdout.contains("x (arg 0, i32[4]): [0, 2, 4, 6]"),
        "{}",
        cpp20.stdout
    );
    let cpp17 = with("c++17");
    assert_eq!(cpp17.code, 1);
    assert!(
        cpp17.stderr.starts_with(
            "error: concepts.cu does not compile (NVRTC's log follows):\nconcepts.cu:2: error"
        ),
        "{}",
        cpp17.stderr
    );
    let unknown = with("c++11");
    assert_eq!(unknown.code, 1);
    assert!(unknown.stderr.contains("c++11"), "{}", unknown.stderr);
}

#[test]
fn flags_of_the_front_end_are_checked_like_the_others() {
    let run = check(
        "template_reduce.cu",
        &["--entry", "k", "--grid", "1", "--block", "1", "-D", "2X=1"],
    );
    assert_eq!(run.code, 1);
    assert!(
        run.stderr.contains("`2X=1` is not a macro definition"),
        "{}",
        run.stderr
    );
    let show = check(
        "overloads.cu",
        &[
            "--entry",
            "fill(int*, int, int)",
            "--grid",
            "1",
            "--block",
            "1",
            "--arg",
            "x:i32[1]=zeros",
            "--arg",
            "i32=1",
            "--arg",
            "i32=1",
            "--show",
            "y",
        ],
    );
    assert_refused(
        &show,
        "--show y: no --arg is named y; the names given are x",
    );
    let uninit = check(
        "overloads.cu",
        &[
            "--entry",
            "fill(int*, int, int)",
            "--grid",
            "1",
            "--block",
            "1",
            "--arg",
            "x:i32[1]=uninit",
            "--arg",
            "i32=1",
            "--arg",
            "i32=1",
        ],
    );
    // The kernel writes x before anything reads it: nothing to report.
    assert_eq!(uninit.code, 0, "{}\n{}", uninit.stdout, uninit.stderr);
    assert!(uninit.stdout.contains("nothing found"), "{}", uninit.stdout);
}

#[test]
fn a_file_of_a_multi_file_sample_is_checked_with_its_headers_host_code_left_out() {
    let run = check_in(
        &corpus().join("project/src"),
        "histogram.cu",
        &[
            "--entry",
            "histogramKernel",
            "--grid",
            "4",
            "--block",
            "64",
            "--arg",
            "histogram:u32[16]=zeros",
            "--arg",
            "u32[1000]=iota",
            "--arg",
            "u32=1000",
        ],
    );
    assert_eq!(
        run.code, 0,
        "stdout:\n{}\nstderr:\n{}",
        run.stdout, run.stderr
    );
    insta::assert_snapshot!("multi_file_sample_on_the_emulator", run.stdout);
    // Its own header's host declarations, the book-style header's host code (CRLF line
    // endings, a host class's methods, a typedef of pthread_t), host-only library headers and a
    // host variable are left out; the device helper in histo_common.h stays, and so does the
    // host class's data (two cudaEvent_t, which NVRTC knows), up to its closing line.
    assert!(
        run.stdout.contains(
            "host code left out (NVRTC compiles device code only): #include <cuda.h> (line 9), #include <cublas_v2.h> (line 10), #include <helper_cuda.h> (line 11), the host variable d_partial (line 15), histogramInit (lines 33–36), histogramRun (lines 38–44), histogramClose (lines 46–49), host code (histo_common.h, lines 9–11), host code (../common/timing.h, lines 6–26)"
        ),
        "{}",
        run.stdout
    );
    let report = json(&check_in(
        &corpus().join("project/src"),
        "histogram.cu",
        &[
            "--entry",
            "histogramKernel",
            "--grid",
            "4",
            "--block",
            "64",
            "--arg",
            "histogram:u32[16]=zeros",
            "--arg",
            "u32[1000]=iota",
            "--arg",
            "u32=1000",
            "--json",
        ],
    ));
    let expected: Vec<f64> = (0..16u32)
        .map(|bin| f64::from((0..1000u32).filter(|v| v % 16 == bin).count() as u32))
        .collect();
    assert_eq!(buffer(&report, "histogram"), expected);
}

#[test]
fn a_kernel_the_emulator_cannot_run_is_refused_with_its_line_and_the_others_run() {
    let args = |entry: &'static str| -> Vec<&'static str> {
        let mut args = vec!["--entry", entry, "--grid", "1", "--block", "32"];
        if entry == "scale_texture" {
            args.extend(["--arg", "f32[32]=zeros", "--arg", "u64=0"]);
        } else {
            args.extend(["--arg", "out:f32[32]=zeros", "--arg", "f32[32]=iota"]);
        }
        args.extend(["--arg", "f32=2", "--arg", "i32=32"]);
        args
    };
    let refused = check("texture_fetch.cu", &args("scale_texture"));
    let line = line_of_marker(
        &std::fs::read_to_string(corpus().join("texture_fetch.cu")).expect("corpus file"),
        "tex1Dfetch",
    )
    .expect("a tex1Dfetch line");
    assert_refused(
        &refused,
        &format!(
            "scale_texture uses `tex.1d.v4.f32.s32` at texture_fetch.cu:{line} (PTX line {}), which the emulator cannot run: texture fetches (tex1Dfetch, tex2D, texture objects) are not emulated; read the data through a plain pointer instead (const T *__restrict__ or __ldg give the same read-only caching)",
            ptx_line_in(&refused.stderr)
        ),
    );
    let mut plain = args("scale_plain");
    plain.push("--json");
    let report = json(&check("texture_fetch.cu", &plain));
    assert_eq!(report["findings"], serde_json::json!([]));
    let doubled: Vec<f64> = (0..32).map(|i| 2.0 * f64::from(i)).collect();
    assert_eq!(buffer(&report, "out"), doubled);
}

/// The PTX line a refusal names, which depends on NVRTC's output rather than on the file.
fn ptx_line_in(stderr: &str) -> String {
    stderr
        .split("(PTX line ")
        .nth(1)
        .and_then(|rest| rest.split(')').next())
        .unwrap_or_default()
        .to_string()
}

#[test]
fn dynamic_shared_memory_left_unsized_is_named_as_such() {
    let base = [
        "--entry",
        "dynamic_reverse",
        "--grid",
        "1",
        "--block",
        "32",
        "--arg",
        "d:i32[32]=iota",
        "--arg",
        "i32=32",
    ];
    let unsized_run = check("dynamic_reverse.cu", &base);
    assert_eq!(unsized_run.code, 2, "{}", unsized_run.stdout);
    assert!(
        unsized_run.stdout.contains(
            "out-of-bounds access to shared memory: staged[0] (staged is dynamic shared memory (extern __shared__), and the launch gave it no bytes)"
        ),
        "{}",
        unsized_run.stdout
    );
    let mut sized = base.to_vec();
    sized.extend(["--shared", "128", "--json"]);
    let report = json(&check("dynamic_reverse.cu", &sized));
    assert_eq!(report["findings"], serde_json::json!([]));
    let reversed: Vec<f64> = (0..32).rev().map(f64::from).collect();
    assert_eq!(buffer(&report, "d"), reversed);
}

#[test]
fn symbol_sets_constant_and_device_variables_before_the_launch() {
    let base = [
        "--entry",
        "convolve5",
        "--grid",
        "2",
        "--block",
        "32",
        "--arg",
        "out:f32[50]=zeros",
        "--arg",
        "f32[50]=iota",
        "--arg",
        "i32=50",
        "--json",
    ];
    let mut set = base.to_vec();
    set.extend([
        "--symbol",
        "taps:f32[5]=const:1",
        "--symbol",
        "filter::gain:f32=2",
    ]);
    let mut shown = set.clone();
    shown.retain(|arg| *arg != "--json");
    shown.extend(["--show", "out"]);
    let text = check("constant_taps.cu", &shown);
    assert_eq!(text.code, 0, "{}\n{}", text.stdout, text.stderr);
    insta::assert_snapshot!("symbols_on_the_emulator", text.stdout);
    let report = json(&check("constant_taps.cu", &set));
    assert_eq!(report["findings"], serde_json::json!([]));
    let expected: Vec<f64> = (0..50i32)
        .map(|i| 2.0 * f64::from((-2..=2).map(|k| (i + k).clamp(0, 49)).sum::<i32>()))
        .collect();
    assert_eq!(buffer(&report, "out"), expected);
    // Unset, constant memory holds zeros, as on a GPU before cudaMemcpyToSymbol.
    let unset = json(&check("constant_taps.cu", &base));
    assert_eq!(buffer(&unset, "out"), vec![0.0; 50]);
    let mut misspelt = base.to_vec();
    misspelt.extend(["--symbol", "tap:f32[5]=const:1"]);
    assert_refused(
        &check("constant_taps.cu", &misspelt),
        "--symbol tap: constant_taps.cu has no __constant__ or __device__ variable named tap",
    );
    let mut too_long = base.to_vec();
    too_long.extend(["--symbol", "taps:f32[6]=const:1"]);
    assert_refused(
        &check("constant_taps.cu", &too_long),
        "--symbol taps:f32[6]=const:1: taps holds 20 bytes, fewer than the 24 given",
    );
}

#[test]
fn what_nvccs_headers_bring_unasked_is_there() {
    require_cuda_headers();
    let run = check(
        "nvcc_habits.cu",
        &[
            "--entry",
            "scaled_max",
            "--grid",
            "1",
            "--block",
            "64",
            "--arg",
            "bf16[100]=iota",
            "--arg",
            "out:f32[1]=zeros",
            "--arg",
            "u32=100",
            "--json",
        ],
    );
    let report = json(&run);
    assert_eq!(report["findings"], serde_json::json!([]));
    let want = 99.0f32 * std::f32::consts::PI;
    assert_eq!(buffer(&report, "out"), [f64::from(want)]);
}

#[test]
fn a_tile_wider_than_a_warp_reduces_through_reserved_shared_memory() {
    require_cuda_headers();
    let report = json(&check(
        "multi_warp_tile.cu",
        &[
            "--entry",
            "tile_sums",
            "--grid",
            "2",
            "--block",
            "128",
            "--arg",
            "i32[256]=iota",
            "--arg",
            "out:i32[4]=zeros",
            "--json",
        ],
    ));
    assert_eq!(report["findings"], serde_json::json!([]));
    let sums: Vec<f64> = (0..4)
        .map(|tile| f64::from((tile * 64..tile * 64 + 64).sum::<i32>()))
        .collect();
    assert_eq!(buffer(&report, "out"), sums);
}

#[test]
fn a_pointer_into_a_buffer_reaches_the_halo_the_host_allocated() {
    let args = |input: &'static str| {
        vec![
            "--entry",
            "box_filter",
            "--grid",
            "2",
            "--block",
            "32",
            "--arg",
            input,
            "--arg",
            "out:f32[64]=zeros",
            "--arg",
            "n:i32=64",
            "--json",
        ]
    };
    let shifted = json(&check("halo_stencil.cu", &args("in:f32[70]+3=iota")));
    assert_eq!(shifted["findings"], serde_json::json!([]));
    assert_eq!(shifted["launch"]["args"][0]["spec"], "in:f32[70]+3=iota");
    // out[i] is the mean of in[i - 3 .. i + 3] as the kernel sees in: i, since in + 3 holds 3, 4, ….
    let want: Vec<f64> = (0..64).map(|i| f64::from(i + 3)).collect();
    let got = buffer(&shifted, "out");
    assert!(
        got.iter()
            .zip(&want)
            .all(|(g, w)| (g - w).abs() <= 1e-5 * w),
        "{got:?}"
    );
    let text = check(
        "halo_stencil.cu",
        &[
            "--entry",
            "box_filter",
            "--grid",
            "2",
            "--block",
            "32",
            "--arg",
            "in:f32[70]+3=iota",
            "--arg",
            "out:f32[64]=zeros",
            "--arg",
            "n:i32=64",
            "--show",
            "out",
        ],
    );
    assert_eq!(text.code, 0, "{}\n{}", text.stdout, text.stderr);
    insta::assert_snapshot!("shifted_pointer_on_the_emulator", text.stdout);
    // Without the offset the same launch reads three elements before the buffer.
    let unshifted = check("halo_stencil.cu", &args("in:f32[70]=iota"));
    assert_eq!(
        unshifted.code, 2,
        "{}\n{}",
        unshifted.stdout, unshifted.stderr
    );
    let report: Value = serde_json::from_str(&unshifted.stdout).expect("JSON");
    let findings = report["findings"].as_array().expect("findings");
    assert_eq!(findings.len(), 1, "{report}");
    assert_eq!(findings[0]["kind"], "out-of-bounds");
    assert!(
        findings[0]["message"]
            .as_str()
            .is_some_and(|m| m.starts_with("out-of-bounds access to global memory: in[-3]")),
        "{}",
        findings[0]["message"]
    );
}

#[test]
fn pointers_into_another_arguments_buffer_share_its_memory() {
    let drift = check(
        "one_allocation.cu",
        &[
            "--entry",
            "drift",
            "--grid",
            "2",
            "--block",
            "32",
            "--arg",
            "pos:f32[128]=iota",
            "--arg",
            "vel=pos+64",
            "--arg",
            "f32=0.5",
            "--arg",
            "n:i32=64",
            "--show",
            "vel",
        ],
    );
    assert_eq!(drift.code, 0, "{}\n{}", drift.stdout, drift.stderr);
    assert!(
        drift
            .stdout
            .contains("  arg 1  vel: a pointer 64 elements into pos (arg 0)\n"),
        "{}",
        drift.stdout
    );
    // pos[i] = i + 0.5 * (64 + i) for the first half; the velocities stay.
    assert!(
        drift.stdout.contains(
            "pos (arg 0, f32[128]): [32, 33.5, 35, 36.5, 38, 39.5, 41, 42.5, 44, 45.5, 47, 48.5, 50, 51.5, 53, 54.5, … 112 more]\n  sum 11184, min 32, max 127\n"
        ),
        "{}",
        drift.stdout
    );
    let in_place = json(&check(
        "one_allocation.cu",
        &[
            "--entry",
            "scale",
            "--grid",
            "2",
            "--block",
            "32",
            "--arg",
            "out:f32[64]=iota",
            "--arg",
            "in=out",
            "--arg",
            "f32=3",
            "--arg",
            "n:i32=64",
            "--json",
        ],
    ));
    assert_eq!(in_place["findings"], serde_json::json!([]));
    let want: Vec<f64> = (0..64).map(|i| f64::from(3 * i)).collect();
    assert_eq!(buffer(&in_place, "out"), want);
    assert_refused(
        &check(
            "one_allocation.cu",
            &[
                "--entry",
                "scale",
                "--grid",
                "1",
                "--block",
                "32",
                "--arg",
                "out:f32[64]=iota",
                "--arg",
                "in=outs",
                "--arg",
                "f32=3",
                "--arg",
                "i32=64",
            ],
        ),
        "--arg 1 (`in=outs`): no --arg is named outs; the named buffers are out",
    );
}

#[test]
fn a_class_of_host_and_device_members_keeps_its_device_part() {
    require_cuda_headers();
    let run = check(
        "mixed_class.cu",
        &[
            "--entry",
            "count_bytes",
            "--grid",
            "2",
            "--block",
            "64",
            "--arg",
            "bins:u32[16]=zeros",
            "--arg",
            "text:u8[1000]=iota",
            "--arg",
            "n:i32=1000",
            "--json",
        ],
    );
    let report = json(&run);
    assert_eq!(report["findings"], serde_json::json!([]));
    let text = check(
        "mixed_class.cu",
        &[
            "--entry",
            "count_bytes",
            "--grid",
            "2",
            "--block",
            "64",
            "--arg",
            "bins:u32[16]=zeros",
            "--arg",
            "text:u8[1000]=iota",
            "--arg",
            "n:i32=1000",
            "--show",
            "bins",
        ],
    );
    assert_eq!(text.code, 0, "{}\n{}", text.stdout, text.stderr);
    insta::assert_snapshot!("mixed_class_on_the_emulator", text.stdout);
    let want: Vec<f64> = (0..16u32)
        .map(|bin| f64::from((0..1000u32).filter(|i| (i % 256) % 16 == bin).count() as u32))
        .collect();
    assert_eq!(buffer(&report, "bins"), want);
    let left_out: Vec<String> = report["launch"]["host_code_left_out"]
        .as_array()
        .expect("left out")
        .iter()
        .map(|left| left["what"].as_str().unwrap_or_default().to_string())
        .collect();
    for member in [
        "the host member BinCounter::BinCounter",
        "the host member BinCounter::release",
        "the host member BinCounter::print",
        "main",
    ] {
        assert!(
            left_out.iter().any(|what| what == member),
            "{member}: {left_out:?}"
        );
    }
    // Kept for the device: the constexpr member, the probes, the defaulted constructor.
    assert!(
        !left_out
            .iter()
            .any(|what| what.contains("bins_needed") || what.contains("probe")),
        "{left_out:?}"
    );
}

#[test]
fn names_the_host_headers_would_have_brought_come_from_libcu() {
    require_cuda_headers();
    let report = json(&check(
        "std_names.cu",
        &[
            "--entry",
            "activate",
            "--grid",
            "1",
            "--block",
            "64",
            "--arg",
            "f32[4]=const:-1",
            "--arg",
            "out:f32[4]=zeros",
            "--arg",
            "n:i32=4",
            "--json",
        ],
    ));
    assert_eq!(report["findings"], serde_json::json!([]));
    let want = f64::from((-1.0f32).exp() - 1.0);
    assert!(
        buffer(&report, "out")
            .iter()
            .all(|got| (got - want).abs() <= 1e-6),
        "{report}"
    );
    let blocks = json(&check(
        "cub_block_sum.cu",
        &[
            "--entry",
            "block_sums",
            "--grid",
            "2",
            "--block",
            "128",
            "--arg",
            "i32[1000]=iota",
            "--arg",
            "out:i32[2]=zeros",
            "--arg",
            "n:i32=1000",
            "--json",
        ],
    ));
    assert_eq!(blocks["findings"], serde_json::json!([]));
    let block = |b: i64| (0..1000i64).filter(|i| (i / 128) % 2 == b).sum::<i64>() as f64;
    assert_eq!(buffer(&blocks, "out"), [block(0), block(1)]);
}

/// Dynamic parallelism: `check` compiles a file whose kernels launch kernels as relocatable
/// code, and the emulator runs each child grid after its parent, as CUDA 12 and 13 may.
#[test]
fn a_launch_from_device_code_runs_its_children() {
    let args = |file: &'static str, data: &'static str| {
        vec![
            file, "--entry", "parent", "--grid", "2", "--block", "32", "--arg", data, "--arg",
            "w:i32=32", "--json",
        ]
    };
    let all = args("nested_launch.cu", "d:i32[64]=iota");
    let report = json(&check(all[0], &all[1..]));
    assert_eq!(report["findings"], serde_json::json!([]));
    let doubled: Vec<f64> = (0..64).map(|i| f64::from(2 * i)).collect();
    assert_eq!(buffer(&report, "d"), doubled);
}

/// What the parent writes after launching a child races with the child, which may already be
/// running: reported at the child's line, naming both kernels as written.
#[test]
fn a_parent_writing_after_its_launch_races_with_the_child() {
    let run = check(
        "nested_launch_race.cu",
        &[
            "--entry",
            "parent",
            "--grid",
            "2",
            "--block",
            "32",
            "--arg",
            "d:i32[64]=zeros",
            "--arg",
            "w:i32=32",
        ],
    );
    assert_eq!(run.code, 2, "{}\n{}", run.stdout, run.stderr);
    let launch = bug_line("nested_launch_race.cu") - 1;
    assert!(
        run.stdout.contains(&format!(
            "double_slice<<<(1,1,1), (32,1,1)>>> launched from the device at nested_launch_race.cu:{launch} touches bytes that the grid that launched it (parent), after the launch, wrote"
        )),
        "{}",
        run.stdout
    );
}

#[test]
fn a_warp_intrinsic_cuda_9_removed_gets_its_sync_form() {
    let run = check(
        "legacy_shuffle.cu",
        &[
            "--entry",
            "warp_sums",
            "--grid",
            "1",
            "--block",
            "32",
            "--arg",
            "f32[32]=iota",
            "--arg",
            "o:f32[1]=zeros",
        ],
    );
    assert_eq!(run.code, 1, "{}\n{}", run.stdout, run.stderr);
    let line = bug_line("legacy_shuffle.cu");
    assert!(
        run.stderr.contains(&format!(
            "legacy_shuffle.cu:{line}: error: identifier \"__shfl_down\" is undefined"
        )),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.ends_with(
            "note: __shfl_down without _sync was removed for compute capability 7.0 and later (CUDA 9), where a warp's threads need not run in step; write __shfl_down_sync(0xffffffff, v, delta), with the mask naming the lanes that take part\n"
        ),
        "{}",
        run.stderr
    );
}

/// The same struct through the cuda backend's launch path, where the driver copies as many bytes
/// as the kernel's parameter declares; required with `RACETRACK_BACKEND=cuda`.
#[test]
fn a_struct_by_value_reaches_a_gpu_kernel_too() {
    if !harness::testing::gpu_for_test() {
        return;
    }
    let (run, y) = saxpy_functor(&["--backend", "cuda"]);
    assert_eq!(y, saxpy_functor_result(), "{}", run.stdout);
}

const SAXPY_FUNCTOR: &str = "f:{f32=2, x:f32[100]=iota, y:f32[100]=const:1, i32=100}";

/// `struct_args.cu`'s saxpy with [`SAXPY_FUNCTOR`], as JSON: the run, its report and `f.y`.
fn saxpy_functor(extra: &[&str]) -> (Run, Vec<f64>) {
    let mut args = vec![
        "--entry",
        "saxpy",
        "--grid",
        "2",
        "--block",
        "64",
        "--arg",
        SAXPY_FUNCTOR,
        "--json",
    ];
    args.extend(extra);
    let run = check("struct_args.cu", &args);
    let y = buffer(&json(&run), "f.y");
    (run, y)
}

/// 2·x + y for x = 0, 1, …, 99 and y = 1.
fn saxpy_functor_result() -> Vec<f64> {
    (0..100).map(|i| 2.0 * f64::from(i) + 1.0).collect()
}

/// `--arg '{…}'`: a struct by value, its pointer fields' buffers shown after the run as fields
/// of their argument; a field list that does not lay out as the kernel's struct is refused in one
/// line that gives both layouts.
#[test]
fn a_struct_by_value_is_passed_field_by_field() {
    let (run, y) = saxpy_functor(&[]);
    assert!(json(&run)["findings"].as_array().is_some_and(Vec::is_empty));
    assert_eq!(y, saxpy_functor_result());
    let text = check(
        "struct_args.cu",
        &[
            "--entry",
            "saxpy",
            "--grid",
            "2",
            "--block",
            "64",
            "--arg",
            SAXPY_FUNCTOR,
            "--show",
            "f",
        ],
    );
    assert_eq!(text.code, 0, "{}\n{}", text.stdout, text.stderr);
    assert!(
        text.stdout.contains("(a struct of 32 bytes, aligned to 8)")
            && text
                .stdout
                .contains("f.y (a field of arg 0, f32[100]): [1, 3, 5,"),
        "{}",
        text.stdout
    );
    let short = check(
        "struct_args.cu",
        &[
            "--entry",
            "saxpy",
            "--grid",
            "2",
            "--block",
            "64",
            "--arg",
            "f:{f32=2, x:f32[100]=iota, i32=100}",
        ],
    );
    assert_refused(
        &short,
        "--arg 0 (`f:{f32=2, x:f32[100]=iota, i32=100}`) does not fit parameter 0 (`Saxpy f`) of saxpy: a 32-byte struct aligned to 8 bytes (pass {FIELD, FIELD, …}, its fields in order: scalars as TYPE=VALUE, pointers as TYPE[LEN]=FILL); the fields given lay out as 24 bytes aligned to 8",
    );
}

#[test]
fn gpuverify_annotations_compile_and_its_assert_is_checked() {
    let file = "gpuverify_annotations.cu";
    let line = |entry: &str| {
        let source = std::fs::read_to_string(corpus().join(file)).expect("corpus file");
        let start = source.find(&format!("void {entry}(")).expect("the kernel");
        let offset = source[start..].find("// BUG:").expect("a // BUG: line");
        source[..start + offset].lines().count() as u32
    };
    let args = |entry: &'static str| {
        [
            "--entry",
            entry,
            "--grid",
            "1",
            "--block",
            "64",
            "--arg",
            "A:i32[64]=iota",
        ]
    };
    let clean = json(&check(file, &[&args("rotate")[..], &["--json"]].concat()));
    assert_eq!(clean["findings"], Value::Array(vec![]), "{clean}");
    let expected: Vec<f64> = (0..64).map(|t| f64::from((t + 3) % 64)).collect();
    assert_eq!(buffer(&clean, "A"), expected);

    let racy = check(file, &args("rotate_racy"));
    assert_eq!(racy.code, 2, "{}\n{}", racy.stdout, racy.stderr);
    let bug = format!("{file}:{}", line("rotate_racy"));
    assert!(
        racy.stdout
            .contains("race (read-after-write) on shared memory: tile[")
            && racy.stdout.contains(&bug),
        "{}",
        racy.stdout
    );

    let failed = check(file, &args("all_positive"));
    assert_eq!(failed.code, 2, "{}\n{}", failed.stdout, failed.stderr);
    assert!(
        failed.stdout.contains(&format!(
            "  {file}:{}: void all_positive(const int *): block: [0,0,0], thread: [0,0,0] Assertion `A[threadIdx.x] > 0` failed.\n",
            line("all_positive")
        )),
        "{}",
        failed.stdout
    );
}

/// A race across a loop's next time round: the barrier between the two lines is not between
/// the two accesses, and the report says where the missing one goes.
#[test]
fn a_race_across_rounds_of_a_loop_names_where_the_barrier_goes() {
    let run = check(
        "loop_carried_race.cu",
        &[
            "--grid",
            "1",
            "--block",
            "64",
            "--arg",
            "f32[256]=iota",
            "--arg",
            "out:f32[64]=zeros",
            "--arg",
            "i32=4",
        ],
    );
    assert_eq!(run.code, 2, "{}\n{}", run.stdout, run.stderr);
    let load = bug_line("loop_carried_race.cu");
    let read = load + 2;
    assert!(
        run.stdout.contains(&format!(
            "here line {read} ran first and line {load} after it, the next time round a loop: a __syncthreads() after line {read}, before the loop comes back to line {load}, orders them"
        )),
        "{}",
        run.stdout
    );
}
