//! The lanes schedule's part inside a warp ([`Schedule::Lanes`]): lanes of one warp that run
//! apart, as independent thread scheduling lets them since Volta.
//!
//! The other schedules keep a converged warp together: an instruction runs for lanes 0 to 31
//! in order, and every lane finishes it before any lane starts the next. Racecheck orders
//! accesses by what the run did (an atomic acquires what earlier atomics on its word released;
//! a word keeps its last write), so that lockstep can order a pair that a GPU need not: lane
//! 31's atomic is always the last of its warp, and its own read after it looks ordered.
//!
//! Here, at a load, store or atomic of shared or global memory, a converged group of lanes may
//! split: a random part of it runs the access and goes on ahead ("favored", the same mark the
//! spin-lock escape of `warp.rs` uses), and the rest wait at the access. The group ahead keeps
//! the warp until, at one of its own later memory accesses, it hands the warp back; then the
//! lowest PC runs again (min-PC reconvergence), so the lanes behind catch up and the groups
//! merge where their PCs meet. Lanes still meet where CUDA makes them: warp-synchronous
//! instructions wait for their mask, barriers for the block.

use super::warp::Warp;
use crate::ir::*;

/// Whether `op` reads or writes memory other threads can see: shared or global (through a
/// generic address too), not a thread's own local memory or parameters.
fn shared_with_others(op: &Op) -> bool {
    let space = match op {
        Op::Ld { space, .. } | Op::St { space, .. } | Op::Atom { space, .. } => *space,
        _ => return false,
    };
    matches!(space, Space::Global | Space::Shared | Space::Generic)
}

/// Before warp `w` runs its next instruction: at a memory access, the group ahead may hand the
/// warp back, and a group of several lanes may split.
pub(crate) fn interleave(code: &[Instr], w: &mut Warp) {
    let Some(ins) = code.get(w.pc as usize) else {
        return;
    };
    if !shared_with_others(&ins.op) {
        return;
    }
    let Some(lanes) = w.lanes.as_mut() else {
        return;
    };
    let ahead = w.favored.is_some_and(|f| w.active & (1 << f) != 0);
    if ahead {
        // The group ahead reached another access: it goes on (mostly: a race needs it to get
        // past the access that would have ordered it), or the lanes behind get a turn.
        if lanes.one_in(4) {
            w.favored = None;
            w.regroup();
        }
        return;
    }
    if w.active.count_ones() < 2 || lanes.one_in(4) {
        return;
    }
    // A random part of the group runs ahead: always its highest lane and never its lowest, the
    // order lockstep never takes (it runs a group's lanes from the lowest up), and any of the
    // lanes between.
    let group = w.active;
    let highest = 1 << (31 - group.leading_zeros());
    let lowest = 1 << group.trailing_zeros();
    let part = ((lanes.rng.next() as u32 & group) | highest) & !lowest;
    // Any of its lanes leads it: where the group ahead diverges, the leader's side goes on.
    let leader = lanes.lane_of(part);
    w.flush();
    w.active = part;
    w.favored = Some(leader);
}
