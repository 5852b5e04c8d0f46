//! Rounds of the hardware schedule on every core, leaving exactly what one core leaves.
//!
//! `plan.rs` decides which rounds may run apart: blocks that keep to themselves for a stretch,
//! or whose next instructions touch no 64-byte line of global memory that another block writes.
//! These files run them: the workers, each with a share of the resident blocks and a `Ctx` of its
//! own; a block's turn (preparing a block that just started, then its rounds); and the join.
//! What order shows (findings, the race detector's calls) each block's turn keeps apart, round by
//! round, and the launch adds the turns up round by round in block order: the order of one core.

mod board;
mod cores;
mod crew;
mod outcomes;
mod share;
#[cfg(test)]
mod tests;
mod turn;

pub(crate) use cores::{MOST_WAITING, detector_shards};
pub(crate) use crew::{Crew, Dismissal};
