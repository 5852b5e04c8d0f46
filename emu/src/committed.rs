//! Test support: every committed PTX (the corpus and every chapter's kernels), every entry, on
//! every schedule with every checker, run two ways that must not differ.

#![allow(clippy::unwrap_used)]

use crate::exec::args::{KernelArg, LaunchConfig};
use crate::exec::emulator::Emulator;
use crate::module::Module;
use crate::options::{RunOptions, Schedule};

/// Words in each buffer a pointer argument gets.
const BUFFER_WORDS: usize = 4096;

/// Every `.ptx` under the corpus and `kernels/ptx`, sorted.
fn committed_ptx() -> Vec<std::path::PathBuf> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    let mut dirs = vec![root.join("tests/corpus"), root.join("../kernels/ptx")];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "ptx") {
                files.push(path);
            }
        }
    }
    files.sort();
    assert!(files.len() > 100, "{} PTX files", files.len());
    files
}

/// One launch of `entry` with generic arguments (a patterned buffer per pointer, small counts)
/// on `blocks` blocks of 96 threads: its report, and every buffer's bytes afterwards.
pub(crate) fn run(
    module: &Module,
    entry: &str,
    blocks: u32,
    options: &RunOptions,
) -> (String, Vec<Vec<u8>>) {
    let mut emu = Emulator::new();
    let f = module
        .funcs
        .iter()
        .find(|f| f.is_entry && f.name == entry)
        .unwrap();
    let mut buffers = Vec::new();
    let args: Vec<KernelArg> = f
        .params
        .iter()
        .map(|p| match p.size {
            // Pointers (and 64-bit counts, which then bound nothing: the step budget does).
            8 => {
                let words: Vec<u8> = (0..BUFFER_WORDS as u32)
                    .flat_map(|i| (i % 97).to_le_bytes())
                    .collect();
                let ptr = emu.alloc(words.len(), "buffer");
                emu.write(ptr, &words).unwrap();
                buffers.push(ptr);
                KernelArg::Ptr(ptr)
            }
            4 => KernelArg::U32(300),
            2 => KernelArg::U16(3),
            1 => KernelArg::U8(1),
            size => KernelArg::Bytes(vec![0; size as usize]),
        })
        .collect();
    let config = LaunchConfig {
        grid: [blocks, 1, 1],
        block: [96, 1, 1],
        dynamic_shared_bytes: 4096,
    };
    let report = emu.launch(module, entry, &config, &args, options);
    let memory: Vec<Vec<u8>> = buffers
        .iter()
        .map(|&ptr| {
            let mut bytes = vec![0; BUFFER_WORDS * 4];
            emu.read(ptr, &mut bytes).unwrap();
            bytes
        })
        .collect();
    (format!("{report:?}"), memory)
}

/// Runs every entry of every committed PTX on `blocks` blocks and the three schedules, once as
/// `parse(ptx).0` with `options(o).0` and once as `.1` with `.1`, and requires the same report
/// (findings, their order and counts, printf, everything) and the same memory. `what` names the
/// difference in the failure message. Returns how many launches were compared.
pub(crate) fn runs_alike(
    what: &str,
    blocks: u32,
    parse: impl Fn(&str) -> Option<(Module, Module)>,
    options: impl Fn(RunOptions) -> (RunOptions, RunOptions),
) -> usize {
    runs_alike_with(what, blocks, parse, options, |_| {})
}

/// [`runs_alike`], calling `before(true)` before each first run and `before(false)` before each
/// second one.
pub(crate) fn runs_alike_with(
    what: &str,
    blocks: u32,
    parse: impl Fn(&str) -> Option<(Module, Module)>,
    options: impl Fn(RunOptions) -> (RunOptions, RunOptions),
    before: impl Fn(bool),
) -> usize {
    runs_alike_every(what, blocks, 1, parse, options, before)
}

/// [`runs_alike`] on every `nth` committed file only.
pub(crate) fn runs_alike_sampled(
    what: &str,
    blocks: u32,
    nth: usize,
    parse: impl Fn(&str) -> Option<(Module, Module)>,
    options: impl Fn(RunOptions) -> (RunOptions, RunOptions),
) -> usize {
    runs_alike_every(what, blocks, nth, parse, options, |_| {})
}

fn runs_alike_every(
    what: &str,
    blocks: u32,
    nth: usize,
    parse: impl Fn(&str) -> Option<(Module, Module)>,
    options: impl Fn(RunOptions) -> (RunOptions, RunOptions),
    before: impl Fn(bool),
) -> usize {
    let mut launches = 0;
    for path in committed_ptx().iter().step_by(nth.max(1)) {
        let ptx = std::fs::read_to_string(path).unwrap();
        let Some((one, other)) = parse(&ptx) else {
            continue;
        };
        let entries: Vec<String> = one.entries().map(str::to_string).collect();
        for entry in &entries {
            for schedule in [
                Schedule::Hardware,
                Schedule::Random { seed: 7 },
                Schedule::Adversarial { seed: 7 },
                Schedule::Lanes { seed: 7 },
            ] {
                let (a, b) = options(RunOptions {
                    schedule,
                    step_budget: 200_000,
                    initcheck: true,
                    ..RunOptions::default()
                });
                before(true);
                let first = run(&one, entry, blocks, &a);
                before(false);
                let second = run(&other, entry, blocks, &b);
                assert!(
                    first == second,
                    "{} {entry} {schedule:?}: {what} ran differently\n{}\n{}",
                    path.display(),
                    first.0,
                    second.0
                );
                launches += 1;
            }
        }
    }
    launches
}

/// The piped and batched race detector against one answering each access at once, on every
/// committed kernel (moved here from `race/pipe.rs`, whose rooms sit below the emulator).
mod tests {
    use crate::module::Module;
    use crate::options::RunOptions;
    use crate::race::pipe::tests::EACH_ACCESS_AT_ONCE;

    /// Launches every committed kernel on every schedule with `threads` cores and a batched
    /// detector, against one core and a detector answering each access at once.
    fn runs_alike_with_a_detector_answering_at_once(what: &str, threads: u32) {
        let launches = super::runs_alike_with(
            what,
            2,
            |ptx| Some((Module::parse(ptx).ok()?, Module::parse(ptx).ok()?)),
            |options| {
                // Bank-conflict counting keeps every round on one core, so that the cores go to
                // the detector's shards (workers have their test in `exec/parallel/`).
                let options = RunOptions {
                    bank_conflicts: true,
                    ..options
                };
                let at_once = RunOptions {
                    threads: 1,
                    ..options
                };
                let batched = RunOptions { threads, ..options };
                (at_once, batched)
            },
            |first| EACH_ACCESS_AT_ONCE.set(first),
        );
        EACH_ACCESS_AT_ONCE.set(false);
        assert!(launches > 300, "{launches} launches");
    }

    /// The detector in two shards, each on a thread of its own (of eight cores), finds what it
    /// finds answering each access at once, in the same order, with the same counts, on every
    /// committed kernel and schedule.
    #[test]
    fn every_committed_kernel_runs_alike_piped_and_at_once() {
        runs_alike_with_a_detector_answering_at_once("a piped race detector", 8);
    }

    /// So does the detector on the interpreter's thread, fed in batches, which records a warp's
    /// coalesced accesses together (see `runs.rs`).
    #[test]
    fn every_committed_kernel_runs_alike_batched_and_at_once() {
        runs_alike_with_a_detector_answering_at_once("a batched race detector", 1);
    }
}
