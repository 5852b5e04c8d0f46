//! `cargo learn list|hint|check|reset` end to end, as a learner types them, on a scratch
//! checkout (`--root`) so the repository's own exercises/ is never touched.

mod common;

use std::path::Path;
use std::process::{Command, Output};

use harness::testing::{assert_one_line_error, require_nvrtc, stderr};
use learn::{find, track};

fn learn(root: &Path, args: &[&str]) -> Output {
    Command::new(harness::ptx::workspace_binary(env!("CARGO_BIN_EXE_learn")))
        .arg("--root")
        .arg(root)
        .args(["--backend", "emu"])
        .args(args)
        .output()
        .unwrap_or_else(|error| panic!("learn does not start: {error}"))
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

#[test]
fn list_writes_every_exercise_file_and_names_them() {
    let (dir, workspace) = common::scratch("list");
    let output = learn(dir.path(), &["list"]);
    assert!(output.status.success(), "{}", stderr(&output));
    let text = stdout(&output);
    assert!(
        text.starts_with(&format!("wrote {} exercise files", track().len())),
        "{text}"
    );
    for exercise in track() {
        assert!(text.contains(exercise.name), "{text}");
        assert_eq!(
            common::read(&workspace.file(exercise)),
            exercise.starting_text()
        );
    }
    common::assert_fits_80_columns(&text);
    // a second run writes nothing and changes nothing
    let again = stdout(&learn(dir.path(), &["list"]));
    assert!(again.starts_with("· ch1 "), "{again}");
    assert!(
        again.contains(&format!("0 of {} done", track().len())),
        "{again}"
    );
}

#[test]
fn hints_come_one_level_at_a_time_for_the_first_unfinished_exercise() {
    require_nvrtc();
    let (dir, _) = common::scratch("hint");
    let first = &track()[0];
    let steps = ["where to look", "what is wrong", "what to change"];
    let mut seen = Vec::new();
    for _ in 0..=steps.len() {
        let output = learn(dir.path(), &["hint"]);
        assert!(output.status.success(), "{}", stderr(&output));
        seen.push(stdout(&output));
    }
    for (level, (text, step)) in seen.iter().zip(steps).enumerate() {
        assert!(
            text.contains(&format!(
                "hint {} of 3 for {}, {step}:",
                level + 1,
                first.name
            )),
            "{text}"
        );
    }
    // past the last, all three again, the last naming the command that shows the solution,
    // never its file
    for level in 1..=3 {
        assert!(
            seen[3].contains(&format!("hint {level} of 3")),
            "{}",
            seen[3]
        );
    }
    for text in &seen {
        assert!(!text.contains(first.solution.path), "{text}");
    }
    assert!(
        seen[3].contains(&format!("`cargo learn solution {}`", first.name)),
        "{}",
        seen[3]
    );
    let named = stdout(&learn(dir.path(), &["hint", "racy-increment"]));
    assert!(
        named.contains("hint 1 of 3 for racy-increment, where to look:"),
        "{named}"
    );
    assert!(named.contains("a race"), "{named}");
}

#[test]
fn the_solution_is_shown_only_when_asked_for_by_name() {
    let (dir, _) = common::scratch("solution");
    let exercise = find("racy-increment").unwrap();
    let output = learn(dir.path(), &["solution", "racy-increment"]);
    assert!(output.status.success(), "{}", stderr(&output));
    let text = stdout(&output);
    assert!(text.contains(exercise.solution.path), "{text}");
    assert!(text.contains("atomicAdd(&x[0], 1)"), "{text}");
    let unnamed = learn(dir.path(), &["solution"]);
    assert_one_line_error(&unnamed, "<NAME>");
    let unknown = learn(dir.path(), &["solution", "no-such-exercise"]);
    assert_one_line_error(&unknown, "there is no exercise `no-such-exercise`");
}

#[test]
fn check_fails_with_the_checker_report_then_passes_once_fixed() {
    require_nvrtc();
    let (dir, workspace) = common::scratch("check");
    let exercise = find("racy-increment").unwrap();
    let failed = learn(dir.path(), &["check", "racy-increment"]);
    assert_eq!(failed.status.code(), Some(1), "{}", stderr(&failed));
    let text = stdout(&failed);
    let line = exercise.stated_line().unwrap();
    assert!(text.contains("✗ racecheck: a race"), "{text}");
    assert!(
        text.contains(&format!("line {line}: x[0] = x[0] + 1;")),
        "{text}"
    );

    common::write(&workspace.file(exercise), exercise.solution.source);
    let passed = learn(dir.path(), &["check", "racy-increment"]);
    assert!(passed.status.success(), "{}", stdout(&passed));
    assert!(stdout(&passed).contains("✓ racy-increment passes\n"));
    assert!(stdout(&passed).contains("What the fix taught:"));
    let list = stdout(&learn(dir.path(), &["list"]));
    assert!(list.contains("✓ ch4 racy-increment"), "{list}");
    assert!(
        list.contains(&format!("1 of {} done", track().len())),
        "{list}"
    );
}

#[test]
fn reset_puts_the_starting_text_back() {
    let (dir, workspace) = common::scratch("reset");
    let exercise = find("tiled-missing-second-sync").unwrap();
    learn(dir.path(), &["list"]);
    common::write(&workspace.file(exercise), "// my attempt\n");
    let output = learn(dir.path(), &["reset", "tiled-missing-second-sync"]);
    assert!(output.status.success(), "{}", stderr(&output));
    assert_eq!(
        stdout(&output).trim_end(),
        "exercises/ch7_matmul/03_tiled_missing_second_sync.cu is back to its starting text\n\
         your version is kept in exercises/ch7_matmul/03_tiled_missing_second_sync.cu.bak"
    );
    let kept = dir
        .path()
        .join("exercises/ch7_matmul/03_tiled_missing_second_sync.cu.bak");
    assert_eq!(common::read(&kept), "// my attempt\n");
    // a file as it started has nothing to keep
    let again = learn(dir.path(), &["reset", "tiled-missing-second-sync"]);
    assert!(!stdout(&again).contains("kept"), "{}", stdout(&again));
    assert_eq!(
        common::read(&workspace.file(exercise)),
        exercise.starting_text()
    );
    assert!(!stdout(&again).contains('✓'), "{}", stdout(&again));
}

/// Resetting a solved exercise says that its ✓ goes, rather than dropping it from the list
/// without a word.
#[test]
fn reset_of_a_solved_exercise_says_its_mark_is_cleared() {
    let (dir, workspace) = common::scratch("reset-solved");
    let exercise = find("tiled-missing-second-sync").unwrap();
    learn(dir.path(), &["list"]);
    workspace
        .update_progress(|progress| progress.record(exercise.name, true))
        .unwrap_or_else(|error| panic!("{error:#}"));
    let output = learn(dir.path(), &["reset", "tiled-missing-second-sync"]);
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(
        stdout(&output).contains("its ✓ is cleared until the file passes again"),
        "{}",
        stdout(&output)
    );
    assert!(!workspace.progress().unwrap().is_done(exercise.name));
}

#[test]
fn bad_names_and_flags_are_one_line_errors() {
    let (dir, _) = common::scratch("errors");
    assert_one_line_error(
        &learn(dir.path(), &["check", "nope"]),
        "there is no exercise `nope`; `cargo learn list` names them all",
    );
    assert_one_line_error(
        &learn(dir.path(), &["reset", "nope"]),
        "there is no exercise `nope`",
    );
    assert_one_line_error(
        &learn(dir.path(), &["check", "tree-nosync"]),
        "there is no exercise `tree-nosync`; did you mean `tree-no-sync`?",
    );
    assert_one_line_error(
        &learn(dir.path(), &["frobnicate"]),
        "unrecognized subcommand",
    );
    let progress = dir.path().join("exercises/.progress.json");
    common::write(&progress, "{ not json");
    assert_one_line_error(&learn(dir.path(), &["list"]), "delete it to start afresh");
}

/// Without NVRTC, and where it cannot be fetched, nothing can be compiled: `check` says why
/// and the command to run, in one sentence, and fails. NVRTC is hidden by running with an
/// empty environment (no python3 on PATH to find a pip-installed one) and an empty cache.
#[test]
fn without_nvrtc_check_says_how_to_install_it() {
    if Path::new("/usr/local/cuda/lib64/libnvrtc.so.13").exists() {
        eprintln!("NVRTC is installed under /usr/local/cuda here; it cannot be hidden");
        return;
    }
    let (dir, _) = common::scratch("no-nvrtc");
    let run = |offline: bool| {
        let mut command = Command::new(harness::ptx::workspace_binary(env!("CARGO_BIN_EXE_learn")));
        command
            .env_clear()
            // An empty folder: without PATH, the C library's default one would find python3.
            .env("PATH", dir.path().join("no-programs"))
            .env("XDG_CACHE_HOME", dir.path().join("cache"))
            .arg("--root")
            .arg(dir.path())
            .args(["check", "racy-increment"]);
        if offline {
            command.env("RACETRACK_OFFLINE", "1");
        }
        command
            .output()
            .unwrap_or_else(|error| panic!("learn does not start: {error}"))
    };
    let offline = run(true);
    assert_one_line_error(
        &offline,
        "RACETRACK_OFFLINE is set, so Racetrack did not fetch it; run `python3 -m pip install nvidia-cuda-nvrtc==13.0.88`",
    );
    let no_python = run(false);
    assert_one_line_error(
        &no_python,
        "Racetrack cannot fetch it: python3 could not be started",
    );
    assert_one_line_error(
        &no_python,
        "run `python3 -m pip install nvidia-cuda-nvrtc==13.0.88` where they are",
    );
    assert!(
        !dir.path().join("cache/racetrack/nvrtc-13.0.88").exists(),
        "nothing is installed when nothing could be fetched"
    );
}

#[test]
fn what_a_failing_kernel_prints_is_on_the_screen() {
    require_nvrtc();
    let (dir, workspace) = common::scratch("printf");
    learn(dir.path(), &["list"]);
    let exercise = find("racy-increment").unwrap();
    let line = exercise.stated_line().unwrap() as usize;
    let mut lines: Vec<String> = exercise.starting_text().lines().map(String::from).collect();
    let printf = r#"    printf("thread %d saw %d\n", threadIdx.x, x[0]);"#;
    lines.insert(line, printf.to_string());
    common::write(&workspace.file(exercise), &(lines.join("\n") + "\n"));
    let failed = learn(dir.path(), &["check", "racy-increment"]);
    assert_eq!(failed.status.code(), Some(1), "{}", stderr(&failed));
    let text = stdout(&failed);
    assert!(text.contains("printf output ("), "{text}");
    assert!(text.contains("    thread 0 saw "), "{text}");
    common::assert_fits_80_columns(&text);
}

#[test]
fn a_missing_kernel_is_named_once_with_the_parameters_the_host_passes() {
    require_nvrtc();
    let (dir, workspace) = common::scratch("missing");
    learn(dir.path(), &["list"]);
    let exercise = find("lookback-flag-before-data").unwrap();
    let entry = exercise.start.kernel().entry;
    let renamed = exercise.starting_text().replace(entry, "my_lookback");
    common::write(&workspace.file(exercise), &renamed);
    let failed = learn(dir.path(), &["check", exercise.name]);
    assert_eq!(failed.status.code(), Some(1), "{}", stderr(&failed));
    let words = common::words(&stdout(&failed));
    assert!(
        words.contains(&format!(
            "defines no kernel `{entry}`; the host launches it as `{entry}("
        )),
        "{words}"
    );
    assert!(
        !words.contains(exercise.solution.entry) || exercise.solution.entry == entry,
        "{words}"
    );
    assert!(words.contains("it defines `my_lookback`"), "{words}");
}

#[test]
fn a_nan_in_y_is_explained_as_an_element_no_thread_wrote() {
    require_nvrtc();
    let (dir, _) = common::scratch("nan");
    learn(dir.path(), &["list"]);
    let failed = learn(dir.path(), &["check", "scalar-multiply-thread-index-only"]);
    assert_eq!(failed.status.code(), Some(1), "{}", stderr(&failed));
    let words = common::words(&stdout(&failed));
    assert!(words.contains("is NaN"), "{words}");
    assert!(
        words.contains("y starts as NaN: a NaN is an element no thread wrote"),
        "{words}"
    );
}

/// A first exercise fixed but not checked since: `hint` without a name checks it, counts it
/// done, and hints at the next one, rather than saying the first needs no hint.
#[test]
fn hint_without_a_name_skips_an_exercise_fixed_since_its_last_check() {
    require_nvrtc();
    let (dir, workspace) = common::scratch("hint-fixed");
    learn(dir.path(), &["list"]);
    let (first, second) = (&track()[0], &track()[1]);
    common::write(&workspace.file(first), first.solution.source);
    let output = learn(dir.path(), &["hint"]);
    assert!(output.status.success(), "{}", stderr(&output));
    let text = stdout(&output);
    assert!(
        text.contains(&format!("hint 1 of 3 for {}, where to look:", second.name)),
        "{text}"
    );
    let list = stdout(&learn(dir.path(), &["list"]));
    assert!(
        list.contains(&format!("✓ {} {}", first.chapter.short(), first.name)),
        "{list}"
    );
}

/// `cargo learn` from a script or an editor's task, with no terminal to watch in, checks the
/// first unfinished exercise once and ends, instead of waiting for keys no one can press.
#[test]
fn without_a_terminal_cargo_learn_checks_once_and_ends() {
    require_nvrtc();
    let (dir, _) = common::scratch("no-terminal");
    let output = learn(dir.path(), &[]);
    let text = stdout(&output);
    assert_eq!(output.status.code(), Some(1), "{text}{}", stderr(&output));
    assert!(text.contains("with none, here is one check"), "{text}");
    assert!(text.contains(track()[0].name), "{text}");
    assert!(text.contains("✗"), "{text}");
    assert!(!text.contains('\u{1b}'), "no screen codes: {text}");
}
