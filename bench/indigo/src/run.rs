//! Writing the suite to disk and running each (code, graph) through `racetrack check` on the
//! emulator, as a user would from the shell.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use crate::code::{Bug, Code, Data2Init, THREADS_PER_BLOCK};
use crate::graph::Graph;
use crate::oracle::{self, Verdict};

#[derive(Debug, thiserror::Error)]
pub enum SuiteError {
    #[error("cannot write the suite into {dir}: {source}")]
    Write { dir: String, source: std::io::Error },
    #[error(
        "cannot start {racetrack}: {source} (build it with `cargo build --release -p harness`)"
    )]
    Start {
        racetrack: String,
        source: std::io::Error,
    },
}

/// How every run of a suite is made.
#[derive(Clone, Debug)]
pub struct RunOptions {
    /// `racetrack check --timeout`.
    pub timeout: Duration,
    /// More `racetrack check` flags for every run: `--schedule random --seed 7`,
    /// `--memory-model ptx`.
    pub check_flags: Vec<String>,
}

/// One finding as `racetrack check --json` reports it: its kind and, for memory findings, the
/// space (global, shared, …).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Found {
    pub kind: String,
    pub space: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// The kernel ran and the checkers found nothing.
    Clean,
    /// The kernel ran and the checkers reported these.
    Findings(Vec<Found>),
    /// `check` refused or failed (exit 1), with its first line.
    Error(String),
    /// The run outlasted `--timeout`.
    Timeout,
}

/// One (code, graph) run with the oracle's verdict beside it.
#[derive(Clone, Debug)]
pub struct Run {
    pub code: Code,
    pub graph: &'static str,
    pub verdict: Verdict,
    pub outcome: Outcome,
    pub seconds: f64,
}

impl Found {
    /// Whether this finding is the kind the planted bug should produce.
    pub fn matches(&self, bug: Bug) -> bool {
        let space = self.space.as_deref();
        match bug {
            // The racing data is global for most patterns, shared for shared_bins' bins.
            Bug::Race | Bug::AtomicBug => self.kind == "race",
            Bug::SyncBug => {
                (self.kind == "race" && space == Some("shared"))
                    || self.kind == "barrier-divergence"
                    || self.kind == "warp-sync"
            }
            Bug::BoundsBug => self.kind == "out-of-bounds",
            Bug::None => false,
        }
    }
}

impl Run {
    pub fn happens(&self) -> bool {
        self.verdict.happens(self.code.bug)
    }

    /// The checker reported the planted bug's kind of finding.
    pub fn found(&self) -> bool {
        match &self.outcome {
            Outcome::Findings(found) => found.iter().any(|f| f.matches(self.code.bug)),
            _ => false,
        }
    }

    pub fn any_finding(&self) -> bool {
        matches!(&self.outcome, Outcome::Findings(found) if !found.is_empty())
    }
}

/// The suite on disk: `codes/NAME.cu` and `graphs/NAME/*.bin`.
#[derive(Debug)]
pub struct Suite {
    pub dir: PathBuf,
    pub codes: Vec<Code>,
    pub graphs: Vec<Graph>,
}

impl Suite {
    pub fn write(dir: &Path, codes: Vec<Code>, graphs: Vec<Graph>) -> Result<Self, SuiteError> {
        let wrap = |source| SuiteError::Write {
            dir: dir.display().to_string(),
            source,
        };
        std::fs::create_dir_all(dir.join("codes")).map_err(wrap)?;
        for code in &codes {
            std::fs::write(dir.join("codes").join(code.file_name()), code.source())
                .map_err(wrap)?;
        }
        for graph in &graphs {
            graph
                .write(&dir.join("graphs").join(graph.name))
                .map_err(wrap)?;
        }
        Ok(Suite {
            dir: dir.to_path_buf(),
            codes,
            graphs,
        })
    }

    /// The `racetrack check` arguments that run `code` on `graph`, paths relative to the suite.
    pub fn check_args(code: Code, graph: &Graph, options: &RunOptions) -> Vec<String> {
        let ty = code.ty.spec();
        let nodes = graph.nodes();
        let graph_dir = format!("graphs/{}", graph.name);
        let data2 = match code.pattern.data2_init() {
            Data2Init::Zeros => "zeros".to_string(),
            Data2Init::Max => format!("const:{}", code.ty.max_fill()),
        };
        let mut args: Vec<String> = vec![
            "check".into(),
            format!("codes/{}", code.file_name()),
            "--entry".into(),
            "kernel".into(),
            "--grid".into(),
            code.blocks(nodes).to_string(),
            "--block".into(),
            THREADS_PER_BLOCK.to_string(),
            "--backend".into(),
            "emu".into(),
            "--json".into(),
            "--show".into(),
            "data2".into(),
            "--timeout".into(),
            options.timeout.as_secs().to_string(),
            "--arg".into(),
            format!("nodes:i32={nodes}"),
            "--arg".into(),
            format!("nindex:i32[]=file:{graph_dir}/nindex.bin"),
            "--arg".into(),
            format!("nlist:i32[]=file:{graph_dir}/nlist.bin"),
            "--arg".into(),
            format!("data1:{ty}[]=file:{graph_dir}/data1.{ty}.bin"),
            "--arg".into(),
            format!("data2:{ty}[{}]={data2}", code.data2_len(nodes)),
        ];
        if code.pattern.has_worklist_size() {
            args.extend(["--arg".into(), "wlsize:i32[1]=zeros".into()]);
        }
        args.extend(options.check_flags.iter().cloned());
        args
    }

    /// Runs every (code, graph) pair in `pairs` through `racetrack`, `jobs` at a time.
    pub fn run(
        &self,
        racetrack: &Path,
        pairs: &[(Code, usize)],
        jobs: usize,
        options: &RunOptions,
        progress: impl Fn(usize) + Sync,
    ) -> Result<Vec<Run>, SuiteError> {
        each_in_parallel(pairs, jobs, progress, |&(code, graph)| {
            self.run_one(racetrack, code, &self.graphs[graph], options)
        })
    }

    fn run_one(
        &self,
        racetrack: &Path,
        code: Code,
        graph: &Graph,
        options: &RunOptions,
    ) -> Result<Run, SuiteError> {
        let started = Instant::now();
        let output = Command::new(racetrack)
            .args(Self::check_args(code, graph, options))
            .current_dir(&self.dir)
            .output()
            .map_err(|source| SuiteError::Start {
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
            code,
            graph: graph.name,
            verdict: oracle::judge(code, graph),
            outcome,
            seconds,
        })
    }
}

/// What `racetrack check --json` printed: its findings' kinds and spaces.
pub fn parse_findings(stdout: &[u8]) -> Outcome {
    let json: serde_json::Value = match serde_json::from_slice(stdout) {
        Ok(json) => json,
        Err(error) => return Outcome::Error(format!("check printed no JSON: {error}")),
    };
    let findings = json["findings"].as_array().cloned().unwrap_or_default();
    if findings.is_empty() {
        return Outcome::Clean;
    }
    Outcome::Findings(
        findings
            .iter()
            .map(|finding| Found {
                kind: finding["kind"].as_str().unwrap_or("?").to_string(),
                space: finding["space"].as_str().map(str::to_string),
            })
            .collect(),
    )
}

/// `run` of every item, `jobs` at a time; the results come back in the items' order, and
/// `progress` hears each finished item's index. The first error ends every job and is returned.
pub(crate) fn each_in_parallel<T: Sync, R: Send, E: Send>(
    items: &[T],
    jobs: usize,
    progress: impl Fn(usize) + Sync,
    run: impl Fn(&T) -> Result<R, E> + Sync,
) -> Result<Vec<R>, E> {
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<R>>> = Mutex::new(items.iter().map(|_| None).collect());
    let failure: Mutex<Option<E>> = Mutex::new(None);
    std::thread::scope(|scope| {
        for _ in 0..jobs.max(1) {
            scope.spawn(|| {
                loop {
                    let index = next.fetch_add(1, Ordering::Relaxed);
                    let Some(item) = items.get(index) else {
                        break;
                    };
                    match run(item) {
                        Ok(result) => {
                            results.lock().unwrap_or_else(|e| e.into_inner())[index] = Some(result);
                            progress(index);
                        }
                        Err(error) => {
                            failure
                                .lock()
                                .unwrap_or_else(|e| e.into_inner())
                                .get_or_insert(error);
                            break;
                        }
                    }
                }
            });
        }
    });
    if let Some(error) = failure.into_inner().unwrap_or_else(|e| e.into_inner()) {
        return Err(error);
    }
    Ok(results
        .into_inner()
        .unwrap_or_else(|e| e.into_inner())
        .into_iter()
        .flatten()
        .collect())
}
