//! The emulated device's residency limits (an H100's): how many blocks of a shape its SMs hold
//! at once. The CUDA runtime answers occupancy queries with them, and a cooperative launch,
//! whose blocks must all be resident together for a grid sync, is refused beyond them
//! (`cudaErrorCooperativeLaunchTooLarge`) in every face that launches one.

/// Streaming multiprocessors.
pub const SM_COUNT: u32 = 132;
/// Shared memory one SM holds, in bytes.
pub const SHARED_PER_SM: usize = 228 * 1024;
/// Threads one SM holds.
pub const THREADS_PER_SM: u32 = 2048;
/// Blocks one SM holds, whatever their size.
pub const BLOCKS_PER_SM: u32 = 32;

/// How many blocks of this shape an SM holds at once (threads, blocks and shared memory;
/// registers are not modelled).
pub fn blocks_per_sm(block: [u32; 3], shared: usize) -> u64 {
    let threads = (block.iter().map(|&d| d as u64).product::<u64>()).max(1);
    let warps_threads = threads.div_ceil(32) * 32;
    let by_threads = THREADS_PER_SM as u64 / warps_threads;
    let by_shared = SHARED_PER_SM
        .checked_div(shared)
        .map_or(u64::MAX, |n| n as u64);
    by_threads.min(by_shared).min(BLOCKS_PER_SM as u64)
}

/// The most blocks a cooperative launch of this block shape may have: every one resident at
/// once, on every SM.
pub fn cooperative_grid_limit(block: [u32; 3], shared: usize) -> u64 {
    blocks_per_sm(block, shared) * SM_COUNT as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cooperative_grid_holds_what_every_sm_holds_at_once() {
        // 1024 threads: two blocks per SM; 32 threads: the 32-block cap; half an SM's shared
        // memory each: two blocks.
        assert_eq!(cooperative_grid_limit([1024, 1, 1], 0), 2 * 132);
        assert_eq!(cooperative_grid_limit([32, 1, 1], 0), 32 * 132);
        assert_eq!(
            cooperative_grid_limit([64, 1, 1], SHARED_PER_SM / 2),
            2 * 132
        );
        // A block of 33 threads takes two warps' room.
        assert_eq!(blocks_per_sm([33, 1, 1], 0), 2048 / 64);
    }
}
