//! The oracle against hand-worked cases, and the generator against the oracle: bug-free codes
//! never show a bug, and every planted bug happens on some input and not on another.

use indigo::code::{Bug, Code, DataType, Mapping, Pattern, all_codes};
use indigo::graph::{Graph, all_graphs};
use indigo::oracle::judge;

fn graph(name: &str) -> Graph {
    all_graphs()
        .into_iter()
        .find(|graph| graph.name == name)
        .unwrap_or_else(|| panic!("no graph {name}"))
}

fn code(pattern: Pattern, mapping: Mapping, persistent: bool, bug: Bug) -> Code {
    Code {
        pattern,
        mapping,
        persistent,
        ty: DataType::Int,
        bug,
    }
}

#[test]
fn bug_free_codes_show_no_bug_on_any_graph() {
    let graphs = all_graphs();
    for code in all_codes().into_iter().filter(|code| code.bug == Bug::None) {
        for graph in &graphs {
            let verdict = judge(code, graph);
            assert!(
                !verdict.happens(Bug::None),
                "{code} on {}: {verdict:?}",
                graph.name
            );
        }
    }
}

#[test]
fn every_planted_bug_happens_on_some_graph() {
    let graphs = all_graphs();
    let mut never = Vec::new();
    for code in all_codes().into_iter().filter(|code| code.bug != Bug::None) {
        if !graphs
            .iter()
            .any(|graph| judge(code, graph).happens(code.bug))
        {
            never.push(code.to_string());
        }
    }
    assert_eq!(never, Vec::<String>::new());
    for code in all_codes().into_iter().filter(|code| code.bug != Bug::None) {
        assert!(
            graphs
                .iter()
                .any(|graph| judge(code, graph).happens(code.bug)),
            "{code} happens on no graph"
        );
    }
}

#[test]
fn a_push_race_needs_two_writers_of_one_vertex() {
    let racy = code(Pattern::PushAdd, Mapping::Thread, false, Bug::Race);
    // Every leaf of the star adds into the hub.
    assert!(judge(racy, &graph("star_17")).happens(Bug::Race));
    // Each vertex of a matching or a directed ring has one in-edge: one writer each.
    assert!(!judge(racy, &graph("matching_64")).happens(Bug::Race));
    assert!(!judge(racy, &graph("ring_dir_128")).happens(Bug::Race));
}

#[test]
fn the_bounds_bug_needs_a_worker_past_the_last_vertex() {
    let thread = code(Pattern::PushAdd, Mapping::Thread, false, Bug::BoundsBug);
    // 128 vertices fill one block of 128 threads exactly: no thread gets v == nodes.
    assert!(!judge(thread, &graph("ring_dir_128")).happens(Bug::BoundsBug));
    let verdict = judge(thread, &graph("chain_12"));
    assert_eq!(
        verdict.out_of_bounds.as_deref(),
        Some("thread 12: Nindex[13] of 13"),
        "{verdict:?}"
    );
    // A persistent loop always reaches v == nodes; a block per vertex never does.
    let persistent = code(Pattern::PushAdd, Mapping::Thread, true, Bug::BoundsBug);
    assert!(judge(persistent, &graph("ring_dir_128")).happens(Bug::BoundsBug));
    let blocks = code(Pattern::PushAdd, Mapping::Block, false, Bug::BoundsBug);
    assert!(!judge(blocks, &graph("chain_12")).happens(Bug::BoundsBug));
}

#[test]
fn a_block_sum_race_needs_two_blocks() {
    let racy = code(Pattern::BlockSum, Mapping::Thread, false, Bug::Race);
    assert!(!judge(racy, &graph("chain_12")).happens(Bug::Race));
    let persistent = code(Pattern::BlockSum, Mapping::Thread, true, Bug::Race);
    assert!(judge(persistent, &graph("chain_12")).happens(Bug::Race));
}

#[test]
fn the_second_syncwarp_matters_only_when_a_warp_takes_a_second_vertex() {
    let racy = code(Pattern::WarpSum, Mapping::Warp, true, Bug::SyncBug);
    // 2 blocks of 4 warps: 8 warps, so 7 vertices give each warp at most one.
    assert!(!judge(racy, &graph("clique_7")).happens(Bug::SyncBug));
    assert!(judge(racy, &graph("chain_12")).happens(Bug::SyncBug));
}

#[test]
fn a_plain_shared_bin_races_only_when_two_threads_share_a_degree() {
    let racy = code(Pattern::SharedBins, Mapping::Thread, false, Bug::Race);
    // Degrees 1 and 0: two bins, one thread each.
    assert!(!judge(racy, &graph("pair")).happens(Bug::Race));
    assert!(judge(racy, &graph("star_17")).happens(Bug::Race));
}

#[test]
fn the_threadfence_reduction_races_without_its_fence_only_across_blocks() {
    let racy = code(Pattern::LastBlock, Mapping::Thread, false, Bug::Race);
    assert!(!judge(racy, &graph("chain_12")).happens(Bug::Race));
    assert!(judge(racy, &graph("path_dir_200")).happens(Bug::Race));
    let unsynced = code(Pattern::LastBlock, Mapping::Thread, false, Bug::SyncBug);
    assert!(judge(unsynced, &graph("pair")).happens(Bug::SyncBug));
}

#[test]
fn a_lanes_read_after_its_own_later_atomic_is_ordered_by_observation() {
    // Every vertex of the clique has degree 6: threads 0..6, all in warp 0, add into bin 6, and
    // thread 6 then reads it without a barrier. Its own atomic, after the lower lanes', read
    // what they wrote: no run of a converged warp shows the race.
    let unsynced = code(Pattern::SharedBins, Mapping::Thread, false, Bug::SyncBug);
    assert!(!judge(unsynced, &graph("clique_7")).happens(Bug::SyncBug));
    // The star's leaves (degree 1) add into bin 1, which thread 1 reads; thread 0 (the hub,
    // degree 16) never adds into it, but threads 2..16 do after thread 1's own atomic.
    assert!(judge(unsynced, &graph("star_17")).happens(Bug::SyncBug));
}
