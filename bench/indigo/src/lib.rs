//! An Indigo-style suite of graph-code microbenchmarks with planted bugs, and the scoreboard of
//! `racetrack check` on it. See this crate's README for what is here and why.
//!
//! - [`code`]: the generated CUDA codes (pattern × mapping × persistence × type × bug);
//! - [`graph`]: the input graphs;
//! - [`oracle`]: whether a code's bug happens on a graph, decided from a model of its accesses;
//! - [`run`]: the suite on disk and its runs through `racetrack check`;
//! - [`table`]: the scoreboard;
//! - [`hirace`]: HiRace's calibrated Indigo suite, from a clone of its artifact, beside Table I.

pub mod code;
pub mod graph;
pub mod hirace;
pub mod oracle;
pub mod run;
pub mod table;

use code::{Code, DataType};
use graph::Graph;

/// The fixed sample `cargo test` runs: every `int` code on four graphs chosen so that each
/// planted bug both happens (a hub that many vertices update, a one-shot launch with idle
/// threads) and does not (in-degree at most one, a vertex count that fills whole warps).
pub const SAMPLE_GRAPHS: [&str; 4] = ["pair", "matching_64", "star_17", "tree_31"];

/// (code, graph index) pairs: everything, or the sample.
pub fn pairs(codes: &[Code], graphs: &[Graph], sample: bool) -> Vec<(Code, usize)> {
    let mut pairs = Vec::new();
    for &code in codes {
        if sample && code.ty != DataType::Int {
            continue;
        }
        for (index, graph) in graphs.iter().enumerate() {
            if sample && !SAMPLE_GRAPHS.contains(&graph.name) {
                continue;
            }
            pairs.push((code, index));
        }
    }
    pairs
}
