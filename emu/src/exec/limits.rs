//! Limits of a launch that the interpreter's rooms share.

/// Backward branches a diverged warp may take while other lanes wait before those lanes get a
/// turn (independent thread scheduling; see README, "Reconvergence").
pub(crate) const SPIN_LIMIT: u32 = 64;
/// Rounds of the hardware schedule with no block finishing before one more block is started, so
/// a resident block that waits for a flag from a block not yet started still makes progress.
/// Doubles after each such start, so long-running blocks start only a few extra.
pub(crate) const STALL_ROUNDS: u64 = 4096;
/// Host memory the resident blocks' register files may take.
pub(crate) const MAX_REGISTER_BYTES: u64 = 2 << 30;
/// The random and adversarial schedules start every block at once; past this many threads
/// their per-thread state would not fit (the hardware schedule runs any grid).
pub(crate) const MAX_ALL_AT_ONCE_THREADS: u64 = 1 << 24;
/// Nested calls a thread may make; a GPU's 1 KiB default stack overflows well before.
pub(crate) const MAX_CALL_DEPTH: usize = 1024;
