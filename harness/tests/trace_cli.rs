//! `racetrack trace` end to end: the built binary writes a trace the format describes, and bad
//! input is refused with one line and exit status 1.

// Test helpers panic with context on purpose; a failed unwrap is a failed test.
#![allow(clippy::unwrap_used)]

use std::path::PathBuf;

use harness::kernel::line_of_marker;
use harness::ptx::workspace_root;
use harness::testing::run_binary_in;
use serde_json::Value;

struct Run {
    code: i32,
    stdout: String,
    stderr: String,
}

fn racetrack(args: &[&str]) -> Run {
    let output = run_binary_in(env!("CARGO_BIN_EXE_racetrack"), &workspace_root(), args);
    Run {
        code: output.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    }
}

fn out_path(name: &str) -> PathBuf {
    let dir = workspace_root().join("target/racetrack/trace-cli");
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

const RACY: &str = "kernels/ch4_atomics/01_racy_increment.cu";

fn racy_args(out: &str) -> Vec<&str> {
    vec![
        "trace",
        RACY,
        "--entry",
        "racy_increment",
        "--grid",
        "2",
        "--block",
        "16",
        "--arg",
        "x:i32[1]=zeros",
        "--out",
        out,
    ]
}

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
    assert_eq!(run.stderr.trim_end().lines().count(), 1, "{}", run.stderr);
}

#[test]
fn writes_a_json_trace_of_the_racy_increment() {
    let out = out_path("racy.json");
    let out_text = out.display().to_string();
    let run = racetrack(&racy_args(&out_text));
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stdout.starts_with("wrote "), "{}", run.stdout);
    let trace: Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    assert_eq!(trace["format"], "racetrack-trace");
    assert_eq!(trace["version"], 1);
    assert_eq!(trace["warps"].as_array().unwrap().len(), 2);
    let source = std::fs::read_to_string(workspace_root().join(RACY)).unwrap();
    let bug = line_of_marker(&source, "// BUG:").unwrap();
    let findings = trace["findings"].as_array().unwrap();
    assert!(!findings.is_empty());
    for finding in findings {
        assert_eq!(finding["kind"], "race");
        assert_eq!(finding["location"]["array"], 0, "x is array 0");
        for access in finding["accesses"].as_array().unwrap() {
            assert_eq!(access["line"], bug);
            let event = &trace["events"][access["event"].as_u64().unwrap() as usize];
            assert!(
                event["access"]["lanes"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .any(|l| l[0] == access["lane"])
            );
        }
    }
    // x[0] ends at 1: every write stored 1.
    let writes: Vec<&Value> = trace["events"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["access"]["op"] == "write")
        .flat_map(|e| e["access"]["lanes"].as_array().unwrap())
        .collect();
    assert_eq!(writes.len(), 32);
    assert!(writes.iter().all(|l| l[3] == 1));
}

/// Without `--entry`, the file's only kernel is traced, and the trace names it and records the
/// command that replays it.
#[test]
fn a_trace_without_entry_names_the_file_s_only_kernel() {
    let out = out_path("racy-unnamed.json");
    let mut args = racy_args(out.to_str().unwrap());
    args.retain(|&arg| arg != "--entry" && arg != "racy_increment");
    let run = racetrack(&args);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    let trace: Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    assert_eq!(trace["kernel"]["entry"], "racy_increment");
    let command = trace["command"].as_str().unwrap();
    assert!(command.contains("--entry racy_increment"), "{command}");
}

#[test]
fn a_js_trace_registers_itself_under_its_file_name() {
    let out = out_path("racy-increment.hardware.js");
    let out_text = out.display().to_string();
    let run = racetrack(&racy_args(&out_text));
    assert_eq!(run.code, 0, "{}", run.stderr);
    let text = std::fs::read_to_string(&out).unwrap();
    assert!(
        text.contains(
            "(window.racetrackTraces = window.racetrackTraces || {})[\"racy-increment.hardware\"] ="
        ),
        "{text}"
    );
    let json = harness::trace::json_of_script(&text).unwrap();
    let trace: Value = serde_json::from_str(json).unwrap();
    assert_eq!(trace["kernel"]["entry"], "racy_increment");
}

#[test]
fn a_launch_past_the_event_bound_is_refused() {
    let out = out_path("too-long.json");
    let out_text = out.display().to_string();
    let mut args = racy_args(&out_text);
    args.extend(["--max-events", "3"]);
    assert_refused(&racetrack(&args), "needs more than 3 events");
}

#[test]
fn columns_must_name_an_array() {
    let out = out_path("columns.json");
    let out_text = out.display().to_string();
    let mut args = racy_args(&out_text);
    args.extend(["--columns", "As=16"]);
    assert_refused(&racetrack(&args), "--columns names `As`");
    let mut args = racy_args(&out_text);
    args.extend(["--columns", "x=0"]);
    assert_refused(&racetrack(&args), "not a positive number of columns");
}

#[test]
fn a_template_kernel_is_traced_by_its_cpp_name() {
    let out = out_path("template.json");
    let out_text = out.display().to_string();
    let file = "harness/tests/check_corpus/template_reduce_racy.cu";
    let run = racetrack(&[
        "trace",
        file,
        "--entry",
        "block_sum<float, 64>",
        "--grid",
        "1",
        "--block",
        "64",
        "--arg",
        "in:f32[64]=const:1",
        "--arg",
        "out:f32[1]=zeros",
        "--arg",
        "n:i32=64",
        "--out",
        &out_text,
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let trace: Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    assert_eq!(trace["kernel"]["entry"], "block_sum<float, 64>");
    let source = std::fs::read_to_string(workspace_root().join(file)).unwrap();
    let bug = line_of_marker(&source, "// BUG:").unwrap();
    let findings = trace["findings"].as_array().unwrap();
    assert!(
        findings.iter().any(|f| f["kind"] == "race"
            && f["accesses"]
                .as_array()
                .unwrap()
                .iter()
                .any(|a| a["line"] == bug)),
        "no race at line {bug}: {findings:?}"
    );
}

#[test]
fn a_define_shapes_the_traced_kernel_and_is_kept_in_its_command() {
    let out = out_path("tile8.json");
    let out_text = out.display().to_string();
    let run = racetrack(&[
        "trace",
        "kernels/ch7_matmul/04_tiled_missing_second_sync.cu",
        "-D",
        "TILE=8",
        "--entry",
        "matmul_tiled_missing_second_sync",
        "--grid",
        "1",
        "--block",
        "8,8",
        "--arg",
        "A:f32[64]=const:1",
        "--arg",
        "B:f32[64]=iota",
        "--arg",
        "C:f32[64]=zeros",
        "--arg",
        "M:u32=8",
        "--arg",
        "N:u32=8",
        "--arg",
        "K:u32=8",
        "--out",
        &out_text,
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let trace: Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    assert!(
        trace["command"].as_str().unwrap().contains(" -D TILE=8 "),
        "{}",
        trace["command"]
    );
    let tile = trace["arrays"]
        .as_array()
        .unwrap()
        .iter()
        .find(|array| array["name"] == "As")
        .expect("the shared tile As is drawn");
    assert_eq!(tile["length"], 64, "As is TILE × TILE with TILE = 8");
}
