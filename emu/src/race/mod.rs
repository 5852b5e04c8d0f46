//! Happens-before race detection with per-word shadow state (see README, "Race detector").
//!
//! Each 4-byte word keeps its last write and up to two reads since that write. Ordering comes
//! from three sources, checked cheapest first: the same thread; the same block with a barrier in
//! between (per-block barrier epochs) or the same warp with a `bar.warp.sync` in between; and
//! release/acquire through atomics and strong (volatile) accesses, tracked with sparse vector
//! clocks that only threads which actually synchronized ever grow.
//!
//! Memory: per-thread and per-block state exists only for the resident blocks (indexed by slot),
//! and the shadow is compact (see [`Chunk`]): an access is a 64-bit record (thread id, byte mask
//! and an interned *stamp* holding the instruction and the clocks, which the threads of a warp
//! share), and 32 words whose records follow the thread numbering (word `i` accessed by thread
//! `base + i`, as coalesced accesses are) keep up to three patterns per record slot instead of
//! 96 records.

mod access;
mod calls;
mod clock;
mod detector;
pub(crate) mod pipe;
mod records;
mod runs;
mod shadow;
mod sync;

// What the interpreter uses, from the rooms that define it (nothing in `race/` imports these).
pub(crate) use access::{Acc, Acquire, Cause, Hit, Kind, Region, Sem, Who};
pub(crate) use calls::{Call, Log, Logged, calls_out_of_order, run_place, word_access_bits};
pub(crate) use pipe::{Found, Racecheck};

#[cfg(test)]
mod tests;
