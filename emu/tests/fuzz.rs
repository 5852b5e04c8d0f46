//! Parser/launcher robustness: mutated corpus PTX must never panic, only parse, run or error.

// Test helpers panic with context on purpose; a failed unwrap is a failed test.
#![allow(clippy::unwrap_used)]

use proptest::prelude::*;
use ptx_emu::*;

fn corpus_texts() -> Vec<String> {
    let dir = format!("{}/tests/corpus", env!("CARGO_MANIFEST_DIR"));
    let mut v: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.path().extension().is_some_and(|x| x == "ptx"))
        .map(|e| std::fs::read_to_string(e.path()).unwrap())
        .collect();
    v.sort();
    v
}

#[derive(Clone, Debug)]
enum Mutation {
    Delete(usize),
    Duplicate(usize),
    Swap(usize, usize),
    Truncate(usize),
    Flip(usize, u8),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        any::<usize>().prop_map(Mutation::Delete),
        any::<usize>().prop_map(Mutation::Duplicate),
        (any::<usize>(), any::<usize>()).prop_map(|(a, b)| Mutation::Swap(a, b)),
        any::<usize>().prop_map(Mutation::Truncate),
        (any::<usize>(), any::<u8>()).prop_map(|(a, c)| Mutation::Flip(a, c)),
    ]
}

fn apply(text: &str, muts: &[Mutation]) -> String {
    let mut lines: Vec<String> = text.lines().map(String::from).collect();
    for m in muts {
        if lines.is_empty() {
            break;
        }
        let n = lines.len();
        match *m {
            Mutation::Delete(i) => {
                lines.remove(i % n);
            }
            Mutation::Duplicate(i) => {
                let l = lines[i % n].clone();
                lines.insert(i % n, l);
            }
            Mutation::Swap(a, b) => lines.swap(a % n, b % n),
            Mutation::Truncate(i) => {
                let joined = lines.join("\n");
                let mut cut = i % (joined.len() + 1);
                while !joined.is_char_boundary(cut) {
                    cut -= 1;
                }
                lines = joined[..cut].lines().map(String::from).collect();
            }
            Mutation::Flip(i, c) => {
                let l = &mut lines[i % n];
                if !l.is_empty() {
                    let mut bytes = l.clone().into_bytes();
                    let k = i / n % bytes.len();
                    // Printable ASCII keeps the text valid UTF-8 and exercises the tokenizer.
                    bytes[k] = 32 + c % 95;
                    *l = String::from_utf8(bytes).unwrap_or_default();
                }
            }
        }
    }
    lines.join("\n")
}

/// Runs every entry with a small launch and a small budget, with pointer arguments to small
/// buffers and small integers for everything else.
fn try_run(text: &str) {
    let Ok(m) = Module::parse(text) else { return };
    let entries: Vec<String> = m.entries().map(String::from).collect();
    for e in entries {
        let mut emu = Emulator::new();
        let bufs: Vec<DevicePtr> = (0..6).map(|i| emu.alloc(256, &format!("b{i}"))).collect();
        let opts = RunOptions {
            step_budget: 20_000,
            ..RunOptions::default()
        };
        let cfg = LaunchConfig {
            grid: [2, 1, 1],
            block: [40, 1, 1],
            dynamic_shared_bytes: 256,
        };
        // Try pointers and 32-bit values for the parameters: whichever matches the sizes runs.
        for shape in 0..3 {
            for nargs in 0..6 {
                let args: Vec<KernelArg> = (0..nargs)
                    .map(|i| match (shape + i) % 3 {
                        0 => KernelArg::Ptr(bufs[i]),
                        1 => KernelArg::I32(7),
                        _ => KernelArg::U64(3),
                    })
                    .collect();
                let _ = emu.launch(&m, &e, &cfg, &args, &opts);
            }
        }
    }
}

/// Every entry of `text` as `try_run` launches it, once per engine: the reports (findings,
/// counts, verdicts) and the buffers afterwards, which must not differ.
fn run_with(text: &str, engine: Engine) -> Vec<(String, Vec<u8>)> {
    let Ok(m) = Module::parse(text) else {
        return Vec::new();
    };
    let entries: Vec<String> = m.entries().map(String::from).collect();
    let mut out = Vec::new();
    for e in entries {
        for shape in 0..3 {
            let mut emu = Emulator::new();
            let bufs: Vec<DevicePtr> = (0..6)
                .map(|i| {
                    let p = emu.alloc(256, &format!("b{i}"));
                    let pattern: Vec<u8> = (0..256u32).map(|k| (k * 37 + i) as u8).collect();
                    emu.write(p, &pattern).unwrap();
                    p
                })
                .collect();
            let opts = RunOptions {
                step_budget: 20_000,
                engine,
                ..RunOptions::default()
            };
            let cfg = LaunchConfig {
                grid: [2, 1, 1],
                block: [40, 1, 1],
                dynamic_shared_bytes: 256,
            };
            let sizes = m.param_sizes(&e).unwrap_or_default();
            let args: Vec<KernelArg> = sizes
                .iter()
                .enumerate()
                .map(|(i, size)| match (size, (shape + i) % 3) {
                    (8, 1) => KernelArg::U64(3),
                    (8, _) => KernelArg::Ptr(bufs[i % 6]),
                    (4, _) => KernelArg::I32(7 + shape as i32),
                    (n, _) => KernelArg::Bytes(vec![1; *n as usize]),
                })
                .collect();
            let report = format!("{:?}", emu.launch(&m, &e, &cfg, &args, &opts));
            let mut memory = Vec::new();
            for b in &bufs {
                let mut bytes = vec![0; 256];
                emu.read(*b, &mut bytes).unwrap();
                memory.extend(bytes);
            }
            out.push((report, memory));
        }
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, failure_persistence: None, ..ProptestConfig::default() })]

    /// The compiled tier against the interpreter on mutated corpus kernels: lines deleted,
    /// duplicated, swapped (so registers are read before they are written, guards land on other
    /// instructions, branches skip other code) give the same reports and memory.
    #[test]
    fn mutated_ptx_runs_alike_interpreted_and_compiled(pick in any::<usize>(), muts in prop::collection::vec(mutation(), 1..6)) {
        let texts = corpus_texts();
        let text = apply(&texts[pick % texts.len()], &muts);
        let interpreted = run_with(&text, Engine::Interp);
        let compiled = run_with(&text, Engine::Compiled);
        prop_assert!(interpreted == compiled, "{text}\n{interpreted:?}\n{compiled:?}");
    }

    #[test]
    fn mutated_ptx_never_panics(pick in any::<usize>(), muts in prop::collection::vec(mutation(), 1..6)) {
        let texts = corpus_texts();
        let text = apply(&texts[pick % texts.len()], &muts);
        try_run(&text);
    }
}

#[test]
fn every_corpus_file_parses_and_runs_without_panicking() {
    for t in corpus_texts() {
        Module::parse(&t).unwrap();
        try_run(&t);
    }
}

/// A mutation the generator found (the corpus's `assert_positive` with its first `setp`
/// deleted): one warp's failed assert aborts the launch, and the warps stepped after it in the
/// same round run one instruction each; the compiled tier ran a whole region there instead.
#[test]
fn steps_after_a_failed_assert_run_alike_interpreted_and_compiled() {
    let text = include_str!("fuzz_cases/assert_then_region.ptx");
    let interpreted = run_with(text, Engine::Interp);
    let compiled = run_with(text, Engine::Compiled);
    assert_eq!(interpreted.len(), 3);
    assert!(
        interpreted
            .iter()
            .any(|(report, _)| report.contains("AssertionFailed")),
        "{interpreted:?}"
    );
    assert!(interpreted == compiled, "{interpreted:?}\n{compiled:?}");
}
