//! `cargo run --release -p indigo -- [--sample]`: writes the suite, runs it through
//! `racetrack check`, and prints the scoreboard. With `--hirace PATH`, HiRace's calibrated
//! Indigo suite from a clone of its artifact instead, beside the paper's Table I.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::Context;
use clap::Parser;
use indigo::code::all_codes;
use indigo::graph::all_graphs;
use indigo::hirace::{self, Artifact, Label, Program};
use indigo::run::{RunOptions, Suite};
use indigo::{pairs, table};

/// Indigo-style graph codes with planted bugs, run through `racetrack check` on the emulator.
#[derive(Debug, Parser)]
struct Args {
    /// Where the codes, graphs and results are written.
    #[arg(long, default_value = "target/indigo")]
    out: PathBuf,
    /// The racetrack binary (`cargo build --release -p harness` makes it).
    #[arg(long, default_value = "target/release/racetrack")]
    racetrack: PathBuf,
    /// Runs at once [default: every core].
    #[arg(long)]
    jobs: Option<usize>,
    /// Only the fixed sample that `cargo test` runs.
    #[arg(long)]
    sample: bool,
    /// Only the codes of this pattern (push_add, pull_max, cond_min, worklist, block_sum,
    /// warp_sum, shared_bins, last_block).
    #[arg(long)]
    pattern: Option<String>,
    /// Seconds one run may take.
    #[arg(long, default_value_t = 120)]
    timeout: u64,
    /// More `racetrack check` flags for every run, after `--`: `-- --schedule random --seed 7`.
    #[arg(last = true)]
    check_flags: Vec<String>,
    /// Also write the scoreboard, with the run's size and wall time, to this Markdown file
    /// (the book includes bench/indigo/scoreboard.md).
    #[arg(long)]
    scoreboard: Option<PathBuf>,
    /// Run HiRace's calibrated Indigo suite from this clone of its SC24 artifact
    /// (JohnJacobsonIII/HiRace-Artifact-SC24) instead of the generated one; --pattern then
    /// names one of its folders (conditional_edge_neighbor, …).
    #[arg(long, value_name = "PATH")]
    hirace: Option<PathBuf>,
}

fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let racetrack = std::path::absolute(&args.racetrack)
        .with_context(|| format!("cannot resolve {}", args.racetrack.display()))?;
    anyhow::ensure!(
        racetrack.is_file(),
        "{} does not exist: build it first with `cargo build --release -p harness`",
        racetrack.display()
    );
    if let Some(clone) = &args.hirace {
        return run_hirace(&args, clone, &racetrack);
    }
    let codes: Vec<_> = all_codes()
        .into_iter()
        .filter(|code| {
            args.pattern
                .as_deref()
                .is_none_or(|p| code.pattern.name() == p)
        })
        .collect();
    anyhow::ensure!(
        !codes.is_empty(),
        "--pattern {}: no such pattern",
        args.pattern.as_deref().unwrap_or_default()
    );
    let suite = Suite::write(&args.out, codes, all_graphs())?;
    let pairs = pairs(&suite.codes, &suite.graphs, args.sample);
    let jobs = jobs(&args);
    let bar = indicatif::ProgressBar::new(pairs.len() as u64);
    let started = Instant::now();
    let options = RunOptions {
        timeout: Duration::from_secs(args.timeout),
        check_flags: args.check_flags.clone(),
    };
    let runs = suite.run(&racetrack, &pairs, jobs, &options, |_| bar.inc(1))?;
    bar.finish_and_clear();
    let wall = started.elapsed().as_secs_f64();
    let codes = pairs
        .iter()
        .map(|pair| pair.0)
        .collect::<BTreeSet<_>>()
        .len();
    let graphs = pairs
        .iter()
        .map(|pair| pair.1)
        .collect::<BTreeSet<_>>()
        .len();
    let flags = if args.check_flags.is_empty() {
        String::new()
    } else {
        format!(", check flags `{}`", args.check_flags.join(" "))
    };
    let summary = format!(
        "{} runs ({codes} codes × {graphs} graphs) in {wall:.0} s wall time with {jobs} jobs{flags}",
        runs.len()
    );
    let scoreboard = table::markdown(&runs);
    println!("{summary}\n\n{scoreboard}");
    if let Some(path) = &args.scoreboard {
        std::fs::write(path, format!("{scoreboard}\n\n{summary}.\n"))
            .with_context(|| format!("cannot write {}", path.display()))?;
    }
    let surprises = table::surprises(&runs);
    let report = args.out.join("surprises.txt");
    std::fs::write(&report, surprises.join("\n") + "\n")
        .with_context(|| format!("cannot write {}", report.display()))?;
    println!(
        "\n{} surprises (listed in {})",
        surprises.len(),
        report.display()
    );
    for line in surprises.iter().take(20) {
        println!("  {line}");
    }
    Ok(())
}

fn jobs(args: &Args) -> usize {
    args.jobs
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, usize::from))
}

/// `--hirace PATH`: every racy and bug-free program of the clone on each of its graphs, as its
/// own `main` runs it, and the table beside the paper's.
fn run_hirace(args: &Args, clone: &Path, racetrack: &Path) -> anyhow::Result<()> {
    let artifact = Artifact::open(clone)?;
    let programs: Vec<&Program> = artifact
        .programs
        .iter()
        .filter(|p| p.label != Label::BoundsOnly)
        .filter(|p| args.pattern.as_deref().is_none_or(|want| p.pattern == want))
        .collect();
    anyhow::ensure!(
        !programs.is_empty(),
        "--pattern {}: no such folder in {}",
        args.pattern.as_deref().unwrap_or_default(),
        clone.display()
    );
    let jobs = jobs(args);
    let runs_wanted = programs.len() * artifact.graphs.len();
    let bar = indicatif::ProgressBar::new(runs_wanted as u64);
    let started = Instant::now();
    let out = args.out.join("hirace");
    let runs = hirace::run(
        &artifact,
        &programs,
        racetrack,
        &out,
        jobs,
        &RunOptions {
            timeout: Duration::from_secs(args.timeout),
            check_flags: args.check_flags.clone(),
        },
        || bar.inc(1),
    )?;
    bar.finish_and_clear();
    let wall = started.elapsed().as_secs_f64();
    let count = |label| programs.iter().filter(|p| p.label == label).count();
    let flags = if args.check_flags.is_empty() {
        String::new()
    } else {
        format!(", check flags `{}`", args.check_flags.join(" "))
    };
    let summary = format!(
        "{} runs ({} racy and {} bug-free programs × {} graphs, {} blocks × {} threads) in {wall:.0} s wall time with {jobs} jobs{flags}",
        runs.len(),
        count(Label::Racy),
        count(Label::BugFree),
        artifact.graphs.len(),
        hirace::BLOCKS,
        hirace::THREADS_PER_BLOCK,
    );
    let table = hirace::markdown(&runs);
    println!("{summary}\n\n{table}");
    if let Some(path) = &args.scoreboard {
        std::fs::write(path, format!("{table}\n\n{summary}.\n"))
            .with_context(|| format!("cannot write {}", path.display()))?;
    }
    let surprises = hirace::surprises(&runs);
    let report = out.join("surprises.txt");
    std::fs::write(&report, surprises.join("\n") + "\n")
        .with_context(|| format!("cannot write {}", report.display()))?;
    println!(
        "\n{} surprises (listed in {})",
        surprises.len(),
        report.display()
    );
    for line in surprises.iter().take(20) {
        println!("  {line}");
    }
    Ok(())
}
