//! HiRace's calibrated Indigo suite, from a clone of its SC24 artifact that the user points at
//! (`cargo run --release -p indigo -- --hirace PATH`): every program run as its own `main` runs
//! it, through `racetrack check`, and a table in the shape of the paper's Table I beside the
//! figures it publishes. Nothing of the suite is kept here: programs, graphs and the header
//! come from the clone.
//!
//! What a program's `main` (in the suite's `indigo_cuda.h`) does, and what this does in its
//! place: it reads an ECL graph (`.egr`: node and edge counts, then CSR `nindex` and `nlist`, all
//! 32-bit); it sizes two data arrays at `max(nodes, max(edges, 1))`, fills `data1[i] = rand() %
//! nodes` and then `data2[i] = rand() % edges` for `i ≥ 1` (element 0 is 0) from glibc's
//! `rand()` unseeded (seed 1); and it launches `test_kernel(nindex, nlist, data1, data2, nodes)`
//! on 1024 blocks of 256 threads, as HiRace's harness asks. Here the arrays become
//! `--arg …=file:` buffers, and the launch is `racetrack check`'s.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use comfy_table::{Table, presets};

use crate::run::{Outcome, RunOptions, parse_findings};

/// The launch HiRace's harness makes of every program.
pub const BLOCKS: u32 = 1024;
pub const THREADS_PER_BLOCK: u32 = 256;

#[derive(Debug, thiserror::Error)]
pub enum HiraceError {
    #[error(
        "{0} is not a clone of HiRace's artifact: it has no indigo/indigo_sources (clone JohnJacobsonIII/HiRace-Artifact-SC24 and pass its folder)"
    )]
    NotAnArtifact(String),
    #[error("cannot read {path}: {source}")]
    Read {
        path: String,
        source: std::io::Error,
    },
    #[error("{path} is not an ECL graph: {why}")]
    BadGraph { path: String, why: String },
    #[error("cannot write the inputs into {dir}: {source}")]
    Write { dir: String, source: std::io::Error },
    #[error(
        "cannot start {racetrack}: {source} (build it with `cargo build --release -p harness`)"
    )]
    Start {
        racetrack: String,
        source: std::io::Error,
    },
}

/// What a program's file name says it holds (the suite's labels).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Label {
    /// A race: `atomicBug`, `guardBug`, `raceBug` or `syncBug` in its name (with or without a
    /// `boundsBug` beside it).
    Racy,
    /// No bug in its name.
    BugFree,
    /// Only a `boundsBug`: Table I leaves these out, and so does this.
    BoundsOnly,
}

impl Label {
    pub fn of(file_name: &str) -> Label {
        const RACES: [&str; 4] = ["atomicBug", "guardBug", "raceBug", "syncBug"];
        if RACES.iter().any(|bug| file_name.contains(bug)) {
            Label::Racy
        } else if file_name.contains("Bug") {
            Label::BoundsOnly
        } else {
            Label::BugFree
        }
    }
}

/// One program of the suite.
#[derive(Clone, Debug)]
pub struct Program {
    pub path: PathBuf,
    /// Its file name without `.cu`.
    pub name: String,
    /// The folder it is in: its pattern (`conditional_edge_neighbor`, …).
    pub pattern: String,
    pub label: Label,
}

/// glibc's `rand()`: the additive feedback generator of `random_r` (TYPE_3, 31 words, lag 3),
/// seeded as `srand(seed)` seeds it; `rand()` with no `srand` is seed 1. Indigo's programs draw
/// their data from it, so the same data needs the same generator.
#[derive(Clone, Debug)]
pub struct GlibcRand {
    ring: [u32; 34],
    at: usize,
}

impl GlibcRand {
    pub fn new(seed: u32) -> GlibcRand {
        let mut words = [0i64; 34];
        words[0] = i64::from(if seed == 0 { 1 } else { seed });
        for i in 1..31 {
            // 16807 · previous mod (2^31 − 1), by Schrage's method as glibc computes it.
            let (hi, lo) = (words[i - 1] / 127_773, words[i - 1] % 127_773);
            let mut next = 16_807 * lo - 2_836 * hi;
            if next < 0 {
                next += 2_147_483_647;
            }
            words[i] = next;
        }
        for i in 31..34 {
            words[i] = words[i - 31];
        }
        let mut rand = GlibcRand {
            ring: words.map(|w| w as u32),
            at: 0,
        };
        // glibc discards the first 310 outputs after seeding.
        for _ in 34..344 {
            rand.step();
        }
        rand
    }

    /// The next word of the ring: r[i] = r[i − 31] + r[i − 3] (mod 2^32).
    fn step(&mut self) -> u32 {
        let n = self.ring.len();
        let word = self.ring[(self.at + n - 31) % n].wrapping_add(self.ring[(self.at + n - 3) % n]);
        self.ring[self.at] = word;
        self.at = (self.at + 1) % n;
        word
    }

    /// The next `rand()`: 0 to `RAND_MAX` (2^31 − 1).
    pub fn next_rand(&mut self) -> i32 {
        (self.step() >> 1) as i32
    }
}

/// An input graph in CSR form.
#[derive(Clone, Debug)]
pub struct Graph {
    pub name: String,
    pub nindex: Vec<i32>,
    pub nlist: Vec<i32>,
}

impl Graph {
    /// Reads an `.egr` file: nodes, edges, `nindex[nodes + 1]`, `nlist[edges]`, little-endian
    /// 32-bit integers.
    pub fn read(path: &Path) -> Result<Graph, HiraceError> {
        let bytes = std::fs::read(path).map_err(|source| HiraceError::Read {
            path: path.display().to_string(),
            source,
        })?;
        let bad = |why: String| HiraceError::BadGraph {
            path: path.display().to_string(),
            why,
        };
        if bytes.len() % 4 != 0 || bytes.len() < 8 {
            return Err(bad(format!("{} bytes is not a whole header", bytes.len())));
        }
        let words: Vec<i32> = bytes
            .chunks_exact(4)
            .map(|w| i32::from_le_bytes([w[0], w[1], w[2], w[3]]))
            .collect();
        let (nodes, edges) = (words[0], words[1]);
        if nodes < 1 || edges < 0 {
            return Err(bad(format!("{nodes} nodes and {edges} edges")));
        }
        let (nodes, edges) = (nodes as usize, edges as usize);
        if words.len() != 2 + nodes + 1 + edges {
            return Err(bad(format!(
                "{nodes} nodes and {edges} edges need {} words, the file has {}",
                2 + nodes + 1 + edges,
                words.len()
            )));
        }
        let name = path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        Ok(Graph {
            name,
            nindex: words[2..3 + nodes].to_vec(),
            nlist: words[3 + nodes..].to_vec(),
        })
    }

    pub fn nodes(&self) -> usize {
        self.nindex.len() - 1
    }

    /// The edge count `main` sizes by: at least 1, so that `nlist` and `% e` exist.
    fn edges_for_data(&self) -> usize {
        self.nlist.len().max(1)
    }

    /// Elements of each data array: `max(nodes, edges)`.
    pub fn data_len(&self) -> usize {
        self.nodes().max(self.edges_for_data())
    }

    /// `data1` and `data2` as `main` fills them.
    pub fn data(&self) -> (Vec<i32>, Vec<i32>) {
        let len = self.data_len();
        let (n, e) = (self.nodes() as i32, self.edges_for_data() as i32);
        let mut rand = GlibcRand::new(1);
        let mut data1 = vec![0; len];
        for x in data1.iter_mut().skip(1) {
            *x = rand.next_rand() % n;
        }
        let mut data2 = vec![0; len];
        for x in data2.iter_mut().skip(1) {
            *x = rand.next_rand() % e;
        }
        (data1, data2)
    }

    /// Writes this graph's four buffers into `dir`.
    fn write(&self, dir: &Path) -> std::io::Result<()> {
        std::fs::create_dir_all(dir)?;
        let bytes = |words: &[i32]| {
            words
                .iter()
                .flat_map(|w| w.to_le_bytes())
                .collect::<Vec<_>>()
        };
        let mut nlist = self.nlist.clone();
        nlist.resize(self.edges_for_data(), 0);
        let (data1, data2) = self.data();
        std::fs::write(dir.join("nindex.bin"), bytes(&self.nindex))?;
        std::fs::write(dir.join("nlist.bin"), bytes(&nlist))?;
        std::fs::write(dir.join("data1.bin"), bytes(&data1))?;
        std::fs::write(dir.join("data2.bin"), bytes(&data2))
    }
}

/// A clone of the artifact: its programs, graphs and header folder.
#[derive(Debug)]
pub struct Artifact {
    pub include: PathBuf,
    pub programs: Vec<Program>,
    pub graphs: Vec<Graph>,
}

impl Artifact {
    /// Opens the clone at `root` (or its `indigo` folder).
    pub fn open(root: &Path) -> Result<Artifact, HiraceError> {
        let indigo = if root.join("indigo_sources").is_dir() {
            root.to_path_buf()
        } else {
            root.join("indigo")
        };
        let sources = indigo.join("indigo_sources");
        if !sources.is_dir() {
            return Err(HiraceError::NotAnArtifact(root.display().to_string()));
        }
        let read_dir = |dir: &Path| {
            let entries = std::fs::read_dir(dir).map_err(|source| HiraceError::Read {
                path: dir.display().to_string(),
                source,
            })?;
            let mut paths: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
            paths.sort();
            Ok::<_, HiraceError>(paths)
        };
        let mut programs = Vec::new();
        for folder in read_dir(&sources)?.into_iter().filter(|p| p.is_dir()) {
            let pattern = folder
                .file_name()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default();
            for path in read_dir(&folder)? {
                if path.extension().is_none_or(|e| e != "cu") {
                    continue;
                }
                let name = path
                    .file_stem()
                    .map(|s| s.to_string_lossy().into_owned())
                    .unwrap_or_default();
                programs.push(Program {
                    label: Label::of(&name),
                    path,
                    name,
                    pattern: pattern.clone(),
                });
            }
        }
        let graphs = read_dir(&indigo.join("input"))?
            .into_iter()
            .filter(|p| p.extension().is_some_and(|e| e == "egr"))
            .map(|p| Graph::read(&p))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Artifact {
            include: indigo.join("indigo_include"),
            programs,
            graphs,
        })
    }
}

/// One (program, graph) run.
#[derive(Clone, Debug)]
pub struct Run {
    pub program: String,
    pub label: Label,
    pub graph: String,
    pub outcome: Outcome,
    pub seconds: f64,
}

impl Run {
    /// A race reported (or a barrier or warp-sync misuse, a sync bug's other faces).
    pub fn reported(&self) -> bool {
        matches!(&self.outcome, Outcome::Findings(found) if found.iter().any(|f| {
            matches!(f.kind.as_str(), "race" | "barrier-divergence" | "warp-sync")
        }))
    }

    /// Anything reported at all.
    pub fn any_finding(&self) -> bool {
        matches!(&self.outcome, Outcome::Findings(found) if !found.is_empty())
    }
}

/// Runs `programs` on every graph of `artifact` through `racetrack`, `jobs` at a time, with
/// `options`' timeout and flags; the graphs' buffers are written under `out`.
pub fn run(
    artifact: &Artifact,
    programs: &[&Program],
    racetrack: &Path,
    out: &Path,
    jobs: usize,
    options: &RunOptions,
    progress: impl Fn() + Sync,
) -> Result<Vec<Run>, HiraceError> {
    for graph in &artifact.graphs {
        let dir = out.join(&graph.name);
        graph.write(&dir).map_err(|source| HiraceError::Write {
            dir: dir.display().to_string(),
            source,
        })?;
    }
    let pairs: Vec<(&Program, &Graph)> = programs
        .iter()
        .flat_map(|&p| artifact.graphs.iter().map(move |g| (p, g)))
        .collect();
    crate::run::each_in_parallel(
        &pairs,
        jobs,
        |_| progress(),
        |&(program, graph)| {
            let args = check_args(artifact, program, graph, out, options);
            run_one(racetrack, program, graph, &args)
        },
    )
}

/// `racetrack check` of `program` on `graph` as its `main` launches it.
fn check_args(
    artifact: &Artifact,
    program: &Program,
    graph: &Graph,
    out: &Path,
    options: &RunOptions,
) -> Vec<String> {
    let dir = out.join(&graph.name);
    let file = |name: &str| dir.join(name).display().to_string();
    let len = graph.data_len();
    let mut args = vec![
        "check".to_string(),
        program.path.display().to_string(),
        "--entry".into(),
        "test_kernel".into(),
        "-I".into(),
        artifact.include.display().to_string(),
        "--grid".into(),
        BLOCKS.to_string(),
        "--block".into(),
        THREADS_PER_BLOCK.to_string(),
        "--backend".into(),
        "emu".into(),
        "--json".into(),
        "--show".into(),
        "data1".into(),
        "--timeout".into(),
        options.timeout.as_secs().to_string(),
        "--arg".into(),
        format!(
            "nindex:i32[{}]=file:{}",
            graph.nindex.len(),
            file("nindex.bin")
        ),
        "--arg".into(),
        format!(
            "nlist:i32[{}]=file:{}",
            graph.edges_for_data(),
            file("nlist.bin")
        ),
        "--arg".into(),
        format!("data1:i32[{len}]=file:{}", file("data1.bin")),
        "--arg".into(),
        format!("data2:i32[{len}]=file:{}", file("data2.bin")),
        "--arg".into(),
        format!("numv:i32={}", graph.nodes()),
    ];
    args.extend(options.check_flags.iter().cloned());
    args
}

fn run_one(
    racetrack: &Path,
    program: &Program,
    graph: &Graph,
    args: &[String],
) -> Result<Run, HiraceError> {
    let started = Instant::now();
    let output = Command::new(racetrack)
        .args(args)
        .output()
        .map_err(|source| HiraceError::Start {
            racetrack: racetrack.display().to_string(),
            source,
        })?;
    let seconds = started.elapsed().as_secs_f64();
    let stderr = String::from_utf8_lossy(&output.stderr);
    let outcome = match output.status.code() {
        Some(0 | 2) => parse_findings(&output.stdout),
        _ if stderr.contains("(--timeout)") => Outcome::Timeout,
        _ => Outcome::Error(
            stderr
                .lines()
                .find(|line| line.starts_with("error"))
                .or_else(|| stderr.lines().next())
                .unwrap_or("no output")
                .to_string(),
        ),
    };
    Ok(Run {
        program: program.name.clone(),
        label: program.label,
        graph: graph.name.clone(),
        outcome,
        seconds,
    })
}

/// Table I of the paper (Jacobson, Burtscher, Gopalakrishnan, "HiRace: Accurate and Fast
/// Source-Level Race Checking of GPU Programs", SC24): racy programs each tool reported, per
/// input graph, of the suite's 346 — HiRace, iGUARD, compute-sanitizer's racecheck.
pub const PUBLISHED: [(&str, u32, u32, u32); 6] = [
    ("DAG_100n_200e", 346, 298, 92),
    ("DAG_200n_400e", 346, 298, 92),
    ("DAG_5n_5e", 182, 118, 92),
    ("counterDAG_200n_1000e", 346, 298, 56),
    ("counterDAG_5n_5e", 295, 148, 92),
    ("power_law_200n_1000e", 346, 297, 128),
];

/// Per graph: racy programs reported and bug-free programs silent, beside Table I's figures.
pub fn markdown(runs: &[Run]) -> String {
    let mut graphs: Vec<&str> = runs.iter().map(|r| r.graph.as_str()).collect();
    graphs.sort_unstable();
    graphs.dedup();
    let mut table = Table::new();
    table.load_preset(presets::ASCII_MARKDOWN);
    table.set_header([
        "input graph",
        "Racetrack: racy reported",
        "Racetrack: bug-free silent",
        "errors / timeouts",
        "HiRace",
        "iGUARD",
        "racecheck",
    ]);
    for graph in graphs {
        let of = |label: Label| {
            runs.iter()
                .filter(move |r| r.graph == graph && r.label == label)
        };
        let racy = of(Label::Racy).count();
        let reported = of(Label::Racy).filter(|r| r.reported()).count();
        let bug_free = of(Label::BugFree).count();
        let silent = of(Label::BugFree).filter(|r| !r.any_finding()).count();
        let errors = runs
            .iter()
            .filter(|r| r.graph == graph && matches!(r.outcome, Outcome::Error(_)))
            .count();
        let timeouts = runs
            .iter()
            .filter(|r| r.graph == graph && r.outcome == Outcome::Timeout)
            .count();
        let published = PUBLISHED.iter().find(|p| p.0 == graph);
        let cell = |value: Option<u32>| value.map_or("—".to_string(), |v| format!("{v} / 346"));
        table.add_row([
            graph.to_string(),
            format!("{reported} / {racy}"),
            format!("{silent} / {bug_free}"),
            format!("{errors} / {timeouts}"),
            cell(published.map(|p| p.1)),
            cell(published.map(|p| p.2)),
            cell(published.map(|p| p.3)),
        ]);
    }
    table.to_string()
}

/// Runs that went other than their label says: a racy program with nothing reported, a
/// bug-free one with a finding, an error or a timeout.
pub fn surprises(runs: &[Run]) -> Vec<String> {
    runs.iter()
        .filter_map(|run| {
            let what = match (&run.outcome, run.label) {
                (Outcome::Error(line), _) => format!("error: {line}"),
                (Outcome::Timeout, _) => "timeout".to_string(),
                (_, Label::Racy) if !run.reported() => {
                    format!("racy, nothing reported ({:?})", run.outcome)
                }
                (_, Label::BugFree) if run.any_finding() => {
                    format!("bug-free, reported {:?}", run.outcome)
                }
                _ => return None,
            };
            Some(format!("{} on {}: {what}", run.program, run.graph))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn glibc_rand_from_seed_one_gives_glibcs_first_values() {
        // What `rand()` returns first in any C program that never calls srand (glibc).
        let mut rand = GlibcRand::new(1);
        let first: Vec<i32> = (0..5).map(|_| rand.next_rand()).collect();
        assert_eq!(
            first,
            [
                1_804_289_383,
                846_930_886,
                1_681_692_777,
                1_714_636_915,
                1_957_747_793
            ]
        );
    }

    #[test]
    fn labels_come_from_file_names() {
        assert_eq!(Label::of("pull_node_neighbor"), Label::BugFree);
        assert_eq!(Label::of("x_boundsBug_atomicBug"), Label::Racy);
        assert_eq!(Label::of("x_guardBug"), Label::Racy);
        assert_eq!(Label::of("x_persistent_boundsBug"), Label::BoundsOnly);
    }
}
