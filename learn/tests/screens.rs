//! What the learner sees, pinned by snapshots the book's "Learn by fixing" page includes: a
//! check's verdict for each kind of failure and for success, and watch mode driven by a save
//! and by keys.

mod common;

use harness::testing::require_nvrtc;
use learn::check::Report;
use learn::cli::title_lines;
use learn::render::report_lines;
use learn::watch::{Event, Flow, Watch};
use learn::{Workspace, check_source, find};

fn exercise(name: &str) -> &'static learn::Exercise {
    find(name).unwrap_or_else(|error| panic!("{error}"))
}

fn screen(name: &str, source: &str) -> (Report, String) {
    let exercise = exercise(name);
    let report = check_source(exercise, source, common::emulator());
    let mut lines = learn::render::fit(title_lines(exercise));
    lines.extend(report_lines(&report, exercise));
    let text = lines.join("\n");
    common::assert_fits_80_columns(&text);
    (report, text)
}

fn starting(name: &str) -> String {
    exercise(name).starting_text()
}

#[test]
fn a_race_names_the_line_and_the_threads() {
    require_nvrtc();
    let (_, text) = screen("racy-increment", &starting("racy-increment"));
    insta::assert_snapshot!("race", text);
}

#[test]
fn a_barrier_some_threads_skip_is_shown_where_each_waits() {
    require_nvrtc();
    let (_, text) = screen("tree-sync-in-if", &starting("tree-sync-in-if"));
    insta::assert_snapshot!("barrier_divergence", text);
}

#[test]
fn an_access_out_of_bounds_names_the_array_and_the_thread() {
    require_nvrtc();
    let (_, text) = screen(
        "scalar-multiply-no-guard",
        &starting("scalar-multiply-no-guard"),
    );
    insta::assert_snapshot!("out_of_bounds", text);
}

#[test]
fn a_wrong_result_shows_the_smallest_failing_case() {
    require_nvrtc();
    let (report, text) = screen("blelloch-no-padding", &starting("blelloch-no-padding"));
    assert_eq!(
        report.outcome.as_ref().err().and_then(|f| f.expect()),
        Some(harness::Expect::WrongResult),
        "{text}"
    );
    insta::assert_snapshot!("wrong_result", text);
}

/// A plausible wrong fix of the tree without barriers: a barrier after each step, but the tree
/// reduces the whole 1024-float array rather than the block's `blockDim.x` floats. The emulator
/// runs blocks of at most 256 threads, so every case adds shared memory no thread wrote.
#[test]
fn an_uninitialized_read_names_the_shared_memory_nobody_wrote() {
    require_nvrtc();
    let name = "tree-no-sync";
    let start = starting(name);
    let mut source = String::new();
    let mut after_add = false;
    for line in start.lines() {
        source.push_str(&line.replace("i = blockDim.x / 2; i > 0;", "i = MAX_THREADS / 2; i > 0;"));
        source.push('\n');
        if after_add && line.trim() == "}" {
            source.push_str("        __syncthreads();\n");
        }
        after_add = line.contains("s[tid] += s[tid + i];");
    }
    assert!(
        source.contains("i = MAX_THREADS / 2;") && source.contains("__syncthreads();\n    }"),
        "{source}"
    );
    let (report, text) = screen(name, &source);
    let first = match &report.outcome {
        Err(learn::check::Failure::Case(case)) => case.findings.first().map(|f| f.kind),
        other => panic!("a failing case, not {other:?}\n{text}"),
    };
    assert!(
        matches!(first, Some(harness::FindingKind::UninitializedRead { .. })),
        "{text}"
    );
    assert!(
        text.contains("✗ initcheck: a read of shared memory nothing wrote"),
        "{text}"
    );
    insta::assert_snapshot!("uninitialized_read", text);
}

#[test]
fn a_compile_error_shows_nvrtc_log_at_the_file_and_line() {
    require_nvrtc();
    let (_, text) = screen(
        "down-sweep-does-not-compile",
        &starting("down-sweep-does-not-compile"),
    );
    assert!(
        text.contains("exercises/ch6_scans/02_down_sweep_does_not_compile.cu:"),
        "{text}"
    );
    insta::assert_snapshot!("compile_error", text);
}

#[test]
fn a_fixed_kernel_passes_and_says_what_the_fix_taught() {
    require_nvrtc();
    let fixed = find("racy-increment").unwrap().solution.source;
    let (report, text) = screen("racy-increment", fixed);
    assert!(report.passed(), "{text}");
    insta::assert_snapshot!("passed", text);
}

#[test]
fn an_empty_kernel_to_write_fails_with_a_wrong_result() {
    require_nvrtc();
    let start = starting("saxpy");
    assert!(start.contains("// TODO: "), "{start}");
    let (report, text) = screen("saxpy", &start);
    assert_eq!(
        report.outcome.as_ref().err().and_then(|f| f.expect()),
        Some(harness::Expect::WrongResult),
        "{text}"
    );
    assert!(text.contains("saxpy · ch1 maps 3/3 · write it"), "{text}");
    insta::assert_snapshot!("write_it_start", text);
}

/// A matrix element no thread wrote: C starts as NaN, and the screen says what a NaN means,
/// where the element is, and the bound the CPU's value allows.
#[test]
fn an_element_never_written_reads_nan_and_says_why() {
    require_nvrtc();
    let (report, text) = screen("tiled-2x2", &starting("tiled-2x2"));
    assert_eq!(
        report.outcome.as_ref().err().and_then(|f| f.expect()),
        Some(harness::Expect::WrongResult),
        "{text}"
    );
    assert!(text.contains("C[0] (row 0, column 0) is NaN"), "{text}");
    assert!(text.contains("C starts as NaN"), "{text}");
    assert!(text.contains(" ± "), "{text}");
    insta::assert_snapshot!("never_written", text);
}

#[test]
fn bank_conflicts_are_counted_at_the_line_that_makes_them() {
    require_nvrtc();
    let (report, text) = screen("transpose-shared", &starting("transpose-shared"));
    assert_eq!(
        report.outcome.as_ref().err().and_then(|f| f.reason()),
        Some(learn::Reason::BankConflicts),
        "{text}"
    );
    assert!(text.contains("32-way"), "{text}");
    insta::assert_snapshot!("bank_conflicts", text);
}

/// A file that meets its bank goal passes, and the emulator says why it did not time it.
#[test]
fn goals_met_and_skipped_are_listed_when_it_passes() {
    require_nvrtc();
    let padded = find("transpose-shared").unwrap().solution.source;
    let (report, text) = screen("transpose-shared", padded);
    assert!(report.passed(), "{text}");
    assert!(text.contains("✓ no bank conflicts"), "{text}");
    assert!(
        text.contains("speed goal (beat transpose-shared on a GPU): skipped"),
        "{text}"
    );
    insta::assert_snapshot!("goals_passed", text);
}

/// What a GPU shows for a speed goal missed; the times are the screen's input here, since the
/// emulator cannot time anything.
#[test]
fn a_missed_speed_goal_shows_both_times() {
    let exercise = exercise("tiled-2x2");
    let report = Report {
        exercise: exercise.name,
        path: exercise.path(),
        source: String::new(),
        outcome: Err(learn::Failure::Goal(Box::new(
            learn::goal::Missed::Slower {
                rival: "tiled",
                yours_ms: 2.5,
                rival_ms: 2.0,
                device: "NVIDIA H100 80GB HBM3".into(),
                case: "2048 × 2048 matrices".into(),
            },
        ))),
        notes: Vec::new(),
    };
    let mut lines = learn::render::fit(title_lines(exercise));
    lines.extend(report_lines(&report, exercise));
    let text = lines.join("\n");
    common::assert_fits_80_columns(&text);
    assert_eq!(
        report.outcome.as_ref().err().and_then(|f| f.reason()),
        Some(learn::Reason::TooSlow)
    );
    insta::assert_snapshot!("too_slow", text);
}

/// Watch mode as the learner drives it: it opens on the first unfinished exercise, a save of
/// the fixed file turns it green, `h` shows a hint, `l` the list, `n` the next exercise, `q`
/// quits.
#[test]
fn watch_mode_checks_on_save_and_answers_keys() {
    require_nvrtc();
    let (_dir, workspace) = common::scratch("watch");
    let mut watch = Watch::start(workspace.clone(), common::emulator()).unwrap();
    let first = watch.current();
    assert_eq!(first.name, "scalar-multiply-no-guard");
    let opening = watch.screen();
    common::assert_fits_80_columns(&opening);
    assert!(opening.contains("✗ memcheck"), "{opening}");
    insta::assert_snapshot!("watch_opening", opening);

    // `h` on the failing file: its current finding first, and the key for the next step
    watch.handle(Event::Key('h'));
    let hinted = watch.screen();
    common::assert_fits_80_columns(&hinted);
    assert!(
        hinted.contains("hint 1 of 3 for scalar-multiply-no-guard, where to look"),
        "{hinted}"
    );
    assert!(hinted.contains("(h again: what is wrong)"), "{hinted}");

    // `a` with one finding, all of it on screen already: said, not silently ignored
    watch.handle(Event::Key('a'));
    let all = watch.screen();
    assert!(
        all.contains("a: every finding is already on the screen"),
        "{all}"
    );

    common::write(&watch.current_file(), first.solution.source);
    assert_eq!(
        watch.handle(Event::Saved(watch.current_file())),
        Flow::Continue
    );
    let fixed = watch.screen();
    common::assert_fits_80_columns(&fixed);
    assert!(
        fixed.contains("✓ scalar-multiply-no-guard passes"),
        "{fixed}"
    );
    assert!(fixed.contains("1 of "), "{fixed}");
    insta::assert_snapshot!("watch_fixed", fixed);

    watch.handle(Event::Key('h'));
    let hinted = watch.screen();
    assert!(
        hinted.contains("scalar-multiply-no-guard passes: no hint needed"),
        "{hinted}"
    );

    watch.handle(Event::Key('l'));
    let list = watch.screen();
    common::assert_fits_80_columns(&list);
    assert!(
        list.lines().count() <= 24,
        "the list fits a 24-line terminal:\n{list}"
    );
    assert!(list.contains("▸1 ✓ scalar-multiply-no-guard"), "{list}");
    assert!(list.contains(" 7 · transpose-shared"), "{list}");
    insta::assert_snapshot!("watch_list", list);

    watch.handle(Event::Key('n'));
    assert_eq!(watch.current().name, "scalar-multiply-thread-index-only");
    let next = watch.screen();
    assert!(next.contains("✗ wrong result"), "{next}");

    // inotify reports opens too, the check's own read of the file among them: an event on a
    // file that did not change neither checks again nor switches exercises
    let other = find("racy-increment").unwrap();
    assert!(!watch.checks_on(&Event::Saved(watch.current_file())));
    assert!(!watch.checks_on(&Event::Saved(workspace.file(other))));
    watch.handle(Event::Saved(workspace.file(other)));
    assert_eq!(watch.current().name, "scalar-multiply-thread-index-only");

    // a save of another exercise's file switches to it
    let mut edited = other.starting_text();
    edited.push_str("\n// my first try\n");
    common::write(&workspace.file(other), &edited);
    assert!(watch.checks_on(&Event::Saved(workspace.file(other))));
    watch.handle(Event::Saved(workspace.file(other)));
    assert_eq!(watch.current().name, "racy-increment");
    assert!(!watch.checks_on(&Event::Saved(workspace.file(other))));
    // a save of anything else is not an exercise
    watch.handle(Event::Saved(workspace.root().join("exercises/notes.txt")));
    assert_eq!(watch.current().name, "racy-increment");
    assert_eq!(watch.handle(Event::Key('q')), Flow::Quit);
}

/// Watch mode in one terminal, `cargo learn check` or `hint` in another: neither erases what
/// the other recorded, and the watch screen counts what the other passed.
#[test]
fn watch_mode_keeps_what_another_cargo_learn_recorded() {
    require_nvrtc();
    let (_dir, workspace) = common::scratch("watch-beside");
    let mut watch = Watch::start(workspace.clone(), common::emulator()).unwrap();
    assert!(watch.screen().contains("0 of "), "{}", watch.screen());
    // the other terminal: a check that passed, a hint shown
    let other = Workspace::new(workspace.root());
    other
        .update_progress(|progress| {
            progress.record("racy-increment", true);
            progress.next_hint("racy-increment", 2);
        })
        .unwrap();
    watch.handle(Event::Saved(workspace.progress_path()));
    assert!(watch.screen().contains("1 of "), "{}", watch.screen());
    // the watch records its own hint and check without dropping the other's records
    watch.handle(Event::Key('h'));
    common::write(&watch.current_file(), watch.current().solution.source);
    watch.handle(Event::Saved(watch.current_file()));
    let progress = workspace.progress().unwrap();
    assert!(progress.is_done("racy-increment"), "{progress:?}");
    assert!(progress.is_done(watch.current().name), "{progress:?}");
    assert_eq!(
        progress.hints.get("racy-increment"),
        Some(&1),
        "{progress:?}"
    );
    assert_eq!(
        progress.hints.get(watch.current().name),
        Some(&1),
        "{progress:?}"
    );
}

/// The signature trap: the printed kernel's old parameter list, compiling now, is
/// refused by name before anything runs.
#[test]
fn an_old_parameter_list_is_named_before_anything_runs() {
    require_nvrtc();
    let old = "extern \"C\" __global__ void down_sweep(int *x, int d, int n)\n{\n    int j = blockIdx.x * blockDim.x + threadIdx.x;\n    if (j < n) {\n        x[j] += d;\n    }\n}\n";
    let (report, text) = screen("down-sweep-does-not-compile", old);
    assert!(
        matches!(&report.outcome, Err(learn::Failure::Kernel(_))),
        "{text}"
    );
    insta::assert_snapshot!("signature_trap", text);
}

/// The host's types under other names run, and a failure leads with the names.
#[test]
fn other_parameter_names_lead_a_failure() {
    require_nvrtc();
    let renamed = "extern \"C\" __global__ void down_sweep(unsigned int *x, unsigned int d, unsigned int n)\n{\n    unsigned int j = blockIdx.x * blockDim.x + threadIdx.x;\n    if (j < n) {\n        x[j] += d;\n    }\n}\n";
    let (report, text) = screen("down-sweep-does-not-compile", renamed);
    assert!(
        matches!(&report.outcome, Err(learn::Failure::Case(_))),
        "{text}"
    );
    // The note comes before the failure it explains.
    let note = text.lines().position(|l| l.starts_with("! "));
    let failure = text.lines().position(|l| l.starts_with("✗ "));
    assert!(note.is_some() && note < failure, "{text}");
    assert!(
        text.contains("! `down_sweep` names its parameters (x, d, n), but the host passes"),
        "{text}"
    );
    // The wrong value is named as the kernel names the buffer, as findings are: the host's
    // `data` is this kernel's `x`.
    assert!(text.contains("✗ wrong result: x["), "{text}");
}

/// More findings than a screen shows: counted, with the way to see them; `--all` (and the
/// watch key `a`) shows every one.
#[test]
fn every_finding_is_reachable() {
    use ptx_emu::{Access, AccessOp, Hazard, SourceLoc, Space, ThreadRef};

    let exercise = exercise("racy-increment");
    let source = exercise.starting_text();
    let finding = |line: u32| harness::Finding {
        kind: harness::FindingKind::Race {
            hazard: Hazard::WriteAfterWrite,
            space: Space::Global,
        },
        count: 1,
        location: None,
        accesses: vec![Access {
            op: AccessOp::Write,
            thread: ThreadRef {
                block: [0, 0, 0],
                thread: [line, 0, 0],
            },
            at: SourceLoc {
                file: exercise.path(),
                line,
                inlined_at: None,
                inlined_into: None,
                called_from: None,
                ptx_line: 1,
            },
        }],
        threads: Vec::new(),
        why: format!("finding at line {line}"),
    };
    let report = Report {
        exercise: exercise.name,
        path: exercise.path(),
        source,
        outcome: Err(learn::Failure::Case(Box::new(learn::check::CaseFailure {
            on: "the emulator, hardware schedule".into(),
            facts: Vec::new(),
            findings: (1..=4).map(finding).collect(),
            wrong: None,
            error: None,
            axes: [1, 1],
            printf: String::new(),
        }))),
        notes: Vec::new(),
    };
    let first = report_lines(&report, exercise).join("\n");
    assert!(first.contains("finding at line 2"), "{first}");
    assert!(!first.contains("finding at line 3"), "{first}");
    // The screen wraps its lines: compare the words.
    let words = common::words(&first);
    assert!(
        words.contains(
            "… and 2 more findings: `cargo learn check racy-increment --all` shows every finding"
        ),
        "{first}"
    );
    let all =
        learn::render::report_lines_shown(&report, exercise, learn::render::Shown::All).join("\n");
    for line in 1..=4 {
        assert!(all.contains(&format!("finding at line {line}")), "{all}");
    }
    assert!(!all.contains("more finding"), "{all}");
}

/// The exercise's screen never outgrows the terminal, whatever the learner asked to see: every
/// finding (`a`) and the hints up to the last (`h` three times) on a file that fails in many
/// places. What does not fit is counted, with the command that prints it whole; a taller
/// terminal shows the same screen uncut.
#[test]
fn the_watch_screen_fits_the_terminal_with_every_finding_and_hint() {
    require_nvrtc();
    let (_dir, workspace) = common::scratch("watch-height");
    let mut watch = Watch::start(workspace, common::emulator()).unwrap();
    let first = watch.current().name;
    for key in ['a', 'h', 'h', 'h'] {
        watch.handle(Event::Key(key));
    }
    let tall = {
        watch.set_height(200);
        watch.screen()
    };
    assert!(
        !tall.contains("than the terminal has room for"),
        "200 rows hold it all:\n{tall}"
    );
    let uncut = tall.lines().count();
    assert!(
        uncut > 24,
        "the case needs more than 24 rows ({uncut}):\n{tall}"
    );
    for rows in [24, 16] {
        watch.set_height(rows);
        let screen = watch.screen();
        common::assert_fits_80_columns(&screen);
        assert!(
            screen.lines().count() <= rows,
            "{rows} rows, {} lines:\n{screen}",
            screen.lines().count()
        );
        let lines: Vec<&str> = screen.lines().collect();
        assert!(
            lines[0].starts_with("Racetrack · learn by fixing"),
            "{screen}"
        );
        assert!(lines[1].starts_with(first), "the title stays:\n{screen}");
        let file = watch.current().path();
        assert!(
            lines[1].contains(&file),
            "the file to open stays, on the title's line:\n{screen}"
        );
        assert!(
            lines.last().unwrap().starts_with("h hint"),
            "the keys stay:\n{screen}"
        );
        assert!(
            screen.contains("✗ memcheck"),
            "the verdict stays:\n{screen}"
        );
        assert!(
            screen.contains("hint 3 of 3"),
            "the hint asked for stays:\n{screen}"
        );
        assert!(
            common::words(&screen)
                .contains(&format!("`cargo learn check {first} --all` prints them")),
            "what was cut is counted, with where to see it:\n{screen}"
        );
    }
}

/// The save that passes the last exercise says the track is complete; `n` then shows what was
/// covered and where the same checkers go next, within 24 rows; `e` goes back, `l` lists.
#[test]
fn the_last_exercise_passed_shows_the_track_complete() {
    require_nvrtc();
    let (_dir, workspace) = common::scratch("watch-complete");
    let last = learn::track().last().unwrap();
    workspace.ensure_files(learn::track()).unwrap();
    workspace
        .update_progress(|progress| {
            for exercise in learn::track() {
                progress.record(exercise.name, exercise.name != last.name);
            }
        })
        .unwrap();
    let mut watch = Watch::start(workspace.clone(), common::emulator()).unwrap();
    assert_eq!(watch.current().name, last.name);
    assert!(
        !watch.screen().contains("track is complete"),
        "{}",
        watch.screen()
    );
    common::write(&watch.current_file(), last.solution.source);
    watch.handle(Event::Saved(watch.current_file()));
    let passed = watch.screen();
    assert!(
        passed.contains(&format!("✓ {} passes", last.name)),
        "{passed}"
    );
    assert!(
        passed.contains("every exercise passes: the track is complete · n: what comes after it"),
        "{passed}"
    );
    watch.handle(Event::Key('n'));
    let complete = watch.screen();
    common::assert_fits_80_columns(&complete);
    assert!(complete.lines().count() <= 24, "{complete}");
    let total = learn::track().len();
    assert!(
        complete.contains(&format!("{total} of {total} done")),
        "{complete}"
    );
    assert!(
        complete.contains(&format!(
            "✓ The track is complete: all {total} exercises pass."
        )),
        "{complete}"
    );
    assert!(
        complete.contains("cargo racetrack run prog.cu -- ARGS"),
        "{complete}"
    );
    insta::assert_snapshot!("watch_complete", complete);
    watch.handle(Event::Key('e'));
    assert!(watch.screen().contains(&format!("✓ {} passes", last.name)));
    watch.handle(Event::Key('n'));
    watch.handle(Event::Key('l'));
    assert!(
        watch.screen().contains("l back to the exercise"),
        "{}",
        watch.screen()
    );
}
