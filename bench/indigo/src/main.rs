//! `cargo run --release -p indigo -- [--sample]`: writes the suite, runs it through
//! `racetrack check`, and prints the scoreboard.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::Context;
use clap::Parser;
use indigo::code::all_codes;
use indigo::graph::all_graphs;
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
    let jobs = args
        .jobs
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, usize::from));
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
