//! The race checker's twin corpus (`tests/race_twins/`): for each class of race — inter-block and
//! inter-warp; atomic, fence, lock; block vs device scope; volatile data under and outside a lock;
//! read after a hand-off — a racy kernel and its race-free twin, through `racetrack check` as a
//! user runs it.
//!
//! Each file says what it expects in its header: `// check:` the command line, `// why:` words
//! every finding of a racy kernel says, `// ptx:` whether `--memory-model ptx` still reports it,
//! `// expect: NAME = V` a clean kernel's result, `// gpu: outputs` a racy kernel that is safe to run
//! on a GPU (for its outputs). In a racy kernel, `// RACE` marks the lines the
//! findings must name and `// RACE?` lines they may name too. Racy kernels must be caught on every
//! schedule, clean ones clean on every schedule, and on a GPU when there is one. A racy kernel
//! whose race only lanes that run apart show says `// schedules: lanes`: it must be caught on
//! the lanes schedule and missed on the others, whose warps move in lockstep (`lanes_*.cu`).

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::process::Output;

use harness::ptx::workspace_root;
use harness::testing::{gpu_for_test, require_nvrtc, run_binary_in};
use serde_json::Value;

const SCHEDULES: [&[&str]; 3] = [
    &["--schedule", "hardware"],
    &["--schedule", "random", "--seed", "7"],
    &["--schedule", "adversarial", "--seed", "7"],
];

/// The schedule whose warps' lanes run apart (independent thread scheduling).
const LANES: &[&str] = &["--schedule", "lanes", "--seed", "7"];

struct Twin {
    file: String,
    source: String,
}

impl Twin {
    fn header(&self, key: &str) -> Option<String> {
        let prefix = format!("// {key}:");
        self.source
            .lines()
            .find_map(|l| l.strip_prefix(&prefix))
            .map(|v| v.trim().to_string())
    }

    fn racy(&self) -> bool {
        self.source.starts_with("// TWIN(racy)")
    }

    /// A racy kernel only the lanes schedule catches (`// schedules: lanes`).
    fn lanes_only(&self) -> bool {
        self.header("schedules").as_deref() == Some("lanes")
    }

    /// The schedules that must catch this racy kernel, or keep this clean one clean.
    fn schedules(&self) -> Vec<&'static [&'static str]> {
        if self.lanes_only() {
            vec![LANES]
        } else {
            SCHEDULES.into_iter().chain([LANES]).collect()
        }
    }

    fn check_args(&self) -> Vec<String> {
        let line = self
            .header("check")
            .unwrap_or_else(|| panic!("{} has no // check: line", self.file));
        line.split_whitespace().map(str::to_string).collect()
    }

    /// The 1-based lines whose comment is exactly `marker`.
    fn marked(&self, marker: &str) -> BTreeSet<u64> {
        self.source
            .lines()
            .enumerate()
            .filter(|(_, l)| l.trim_end().ends_with(marker))
            .map(|(i, _)| i as u64 + 1)
            .collect()
    }

    /// `racetrack check FILE` with the file's own `// check:` arguments and `extra`, in the
    /// corpus folder, on the emulator unless `extra` names a backend.
    fn check(&self, extra: &[&str]) -> Output {
        let own = self.check_args();
        let mut args = vec!["check", self.file.as_str()];
        args.extend(own.iter().map(String::as_str));
        if !extra.contains(&"--backend") {
            args.extend(["--backend", "emu"]);
        }
        args.extend(extra);
        run_binary_in(env!("CARGO_BIN_EXE_racetrack"), &folder(), &args)
    }

    /// `racetrack check` as a user types it: text on stdout, and the exit code.
    fn run_text(&self) -> (i32, String) {
        let output = self.check(&[]);
        (
            output.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&output.stdout).into_owned(),
        )
    }

    fn run(&self, extra: &[&str]) -> (i32, Value) {
        let mut extra = extra.to_vec();
        extra.push("--json");
        let output = self.check(&extra);
        let stdout = String::from_utf8_lossy(&output.stdout);
        let report = serde_json::from_str(&stdout).unwrap_or_else(|e| {
            panic!(
                "{}: {e}\n{stdout}\n{}",
                self.file,
                String::from_utf8_lossy(&output.stderr)
            )
        });
        (output.status.code().unwrap_or(-1), report)
    }
}

fn folder() -> PathBuf {
    workspace_root().join("harness/tests/race_twins")
}

fn twins() -> Vec<Twin> {
    let mut files: Vec<_> = std::fs::read_dir(folder())
        .expect("the twin corpus")
        .map(|e| {
            e.expect("an entry")
                .file_name()
                .to_string_lossy()
                .into_owned()
        })
        .filter(|f| f.ends_with(".cu"))
        .collect();
    files.sort();
    files
        .into_iter()
        .map(|file| Twin {
            source: std::fs::read_to_string(folder().join(&file)).expect("a twin"),
            file,
        })
        .collect()
}

/// The lines of `file` an access line of a finding names: `file:N`, and `inlined at line N` after
/// one (lines of headers it reaches into are not the twin's).
fn lines_in(message: &str, file: &str) -> BTreeSet<u64> {
    let number = |s: &str| {
        s.chars()
            .take_while(char::is_ascii_digit)
            .collect::<String>()
            .parse::<u64>()
            .ok()
    };
    let mut lines = BTreeSet::new();
    for part in message.split(&format!("{file}:")).skip(1) {
        lines.extend(number(part));
        if let Some(rest) = part.split_once("(inlined at line ") {
            lines.extend(number(rest.1));
        }
    }
    lines
}

fn findings(report: &Value) -> &Vec<Value> {
    report["findings"].as_array().expect("findings")
}

/// A clean run: exit 0, no findings, and the `// expect:` buffer holds its value.
fn assert_clean(twin: &Twin, code: i32, report: &Value, how: &str) {
    assert_eq!(code, 0, "{} ({how}): {report:#}", twin.file);
    assert!(
        findings(report).is_empty(),
        "{} ({how}): {report:#}",
        twin.file
    );
    if let Some(expect) = twin.header("expect") {
        let (name, value) = expect.split_once('=').expect("// expect: NAME = V");
        let (name, value) = (name.trim(), value.trim());
        let buffer = report["buffers"]
            .as_array()
            .and_then(|b| b.iter().find(|b| b["label"] == name))
            .unwrap_or_else(|| panic!("{}: no buffer {name}", twin.file));
        assert_eq!(
            buffer["data"][0].to_string(),
            value,
            "{} ({how}): {name}",
            twin.file
        );
    }
}

#[test]
fn the_corpus_has_a_twin_for_every_racy_kernel() {
    let all = twins();
    let racy = all.iter().filter(|t| t.racy()).count();
    assert!(racy >= 8, "only {racy} racy twins");
    for twin in all.iter().filter(|t| t.racy()) {
        let partner = twin
            .header("TWIN(racy)")
            .and_then(|h| h.split("Twin:").nth(1).map(str::to_string))
            .unwrap_or_else(|| {
                // The sentence may wrap: find "Twin:" anywhere in the header comment.
                twin.source
                    .split("Twin: ")
                    .nth(1)
                    .expect("a Twin: name")
                    .to_string()
            });
        let partner = partner
            .split(|c: char| c.is_whitespace() || c == ',')
            .next()
            .unwrap_or_default()
            .trim_end_matches('.');
        let found = all.iter().find(|t| t.file == partner);
        assert!(
            found.is_some_and(|t| !t.racy()),
            "{}: its twin {partner} is not a clean file of the corpus",
            twin.file
        );
    }
}

#[test]
fn racy_twins_are_caught_on_every_schedule_at_their_lines() {
    require_nvrtc();
    for twin in twins().into_iter().filter(Twin::racy) {
        let must = twin.marked("// RACE");
        let may: BTreeSet<u64> = must.union(&twin.marked("// RACE?")).copied().collect();
        let why = twin.header("why").expect("a // why: line");
        assert!(!must.is_empty(), "{}: no // RACE line", twin.file);
        for schedule in twin.schedules() {
            let how = schedule.join(" ");
            let (code, report) = twin.run(schedule);
            assert_eq!(code, 2, "{} ({how}): {report:#}", twin.file);
            let mut named = BTreeSet::new();
            for finding in findings(&report) {
                assert_eq!(
                    finding["kind"], "race",
                    "{} ({how}): {finding:#}",
                    twin.file
                );
                let message = finding["message"].as_str().expect("a message");
                assert!(
                    message.contains(&why),
                    "{} ({how}): the finding does not say {why:?}:\n{message}",
                    twin.file
                );
                assert!(
                    !message.contains(" at /"),
                    "{} ({how}): CUDA's headers are named as included, not by path:\n{message}",
                    twin.file
                );
                let threads = message.lines().filter(|l| l.contains("thread (")).count();
                assert_eq!(
                    threads, 2,
                    "{} ({how}): both threads:\n{message}",
                    twin.file
                );
                for access in message.lines().filter(|l| l.contains("thread (")) {
                    named.extend(lines_in(access, &twin.file));
                }
            }
            assert!(
                must.is_subset(&named) && named.is_subset(&may),
                "{} ({how}): findings name lines {named:?}, expected {must:?} (and maybe {may:?})",
                twin.file
            );
        }
    }
}

#[test]
fn the_ptx_memory_model_reports_scope_races_but_not_volatile_data() {
    require_nvrtc();
    for twin in twins().into_iter().filter(Twin::racy) {
        let mut flags = vec!["--memory-model", "ptx"];
        if twin.lanes_only() {
            flags.extend(LANES);
        }
        let (code, report) = twin.run(&flags);
        match twin.header("ptx").as_deref() {
            Some("racy") => assert_eq!(code, 2, "{}: {report:#}", twin.file),
            Some("clean") => assert_clean(&twin, code, &report, "--memory-model ptx"),
            other => panic!("{}: // ptx: is {other:?}", twin.file),
        }
    }
}

#[test]
fn clean_twins_are_clean_on_every_schedule() {
    require_nvrtc();
    for twin in twins().into_iter().filter(|t| !t.racy()) {
        for schedule in twin.schedules() {
            let (code, report) = twin.run(schedule);
            assert_clean(&twin, code, &report, &schedule.join(" "));
        }
    }
}

/// What lockstep hides: the lanes-only racy kernels are silent on the schedules that keep a
/// warp's lanes together, and the lanes schedule's findings say it was the one that ran them
/// apart.
#[test]
fn lockstep_hides_the_lanes_only_races_and_the_lanes_schedule_names_itself() {
    require_nvrtc();
    let lanes_only: Vec<Twin> = twins().into_iter().filter(Twin::lanes_only).collect();
    assert!(
        lanes_only.len() >= 2,
        "only {} lanes-only twins",
        lanes_only.len()
    );
    for twin in &lanes_only {
        assert!(twin.racy(), "{}: only racy twins are lanes-only", twin.file);
        for schedule in SCHEDULES {
            let (code, report) = twin.run(schedule);
            assert_eq!(
                code,
                0,
                "{} ({}): {report:#}",
                twin.file,
                schedule.join(" ")
            );
            assert!(findings(&report).is_empty(), "{}: {report:#}", twin.file);
        }
        let (_, text) = {
            let output = twin.check(LANES);
            (
                output.status.code(),
                String::from_utf8_lossy(&output.stdout).into_owned(),
            )
        };
        assert!(
            text.contains("(lanes schedule, seed 7)"),
            "{}:\n{text}",
            twin.file
        );
        assert!(
            text.contains("and the schedule lanes:7 ran its lanes apart"),
            "{}:\n{text}",
            twin.file
        );
    }
}

/// The clean twins on a GPU, when there is one (required with `RACETRACK_BACKEND=cuda`). Racy
/// twins run there only when marked, for their outputs (below).
#[test]
fn clean_twins_give_the_same_results_on_a_gpu() {
    require_nvrtc();
    if !gpu_for_test() {
        return;
    }
    for twin in twins().into_iter().filter(|t| !t.racy()) {
        let (code, report) = twin.run(&["--backend", "cuda"]);
        assert_clean(&twin, code, &report, "cuda");
    }
}

/// The racy twins whose header says `// gpu: outputs` on a GPU, when there is one (required with
/// `RACETRACK_BACKEND=cuda`): each runs to its end and gives its buffers, whatever values the race
/// leaves (printed, for the record). Only twins that cannot hang are marked: their locks are taken
/// by one lane per warp, and a missing fence or an unlocked writer changes values, not progress.
#[test]
fn racy_twins_marked_for_the_gpu_run_there_for_their_outputs() {
    require_nvrtc();
    if !gpu_for_test() {
        return;
    }
    for twin in twins().into_iter().filter(Twin::racy) {
        if twin.header("gpu").as_deref() != Some("outputs") {
            continue;
        }
        let (code, report) = twin.run(&["--backend", "cuda"]);
        assert_eq!(code, 0, "{} (cuda): {report:#}", twin.file);
        let buffers = report["buffers"].as_array().expect("buffers");
        assert!(!buffers.is_empty(), "{} (cuda): {report:#}", twin.file);
        for buffer in buffers {
            println!(
                "{} on the GPU: {} = {}",
                twin.file, buffer["label"], buffer["data"][0]
            );
        }
    }
}

/// What a learner sees for a scoped atomic, a block-scoped fence and volatile data: the book's
/// emulator page shows these.
#[test]
fn scoped_and_volatile_reports_read_as_the_book_shows_them() {
    require_nvrtc();
    for (file, name) in [
        ("atomic_block_scope_racy.cu", "atomic_block_scope"),
        ("fence_block_scope_racy.cu", "fence_block_scope"),
        ("read_after_handoff_racy.cu", "read_after_handoff"),
    ] {
        let twin = twins()
            .into_iter()
            .find(|t| t.file == file)
            .expect("the twin");
        let (code, text) = twin.run_text();
        assert_eq!(code, 2, "{text}");
        insta::assert_snapshot!(name, text);
    }
}
