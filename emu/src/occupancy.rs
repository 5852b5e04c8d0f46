//! The emulated device's residency limits (an H100's): how many blocks of a shape its SMs hold
//! at once. The CUDA runtime answers occupancy queries with them, and a cooperative launch,
//! whose blocks must all be resident together for a grid sync, is refused beyond them
//! (`cudaErrorCooperativeLaunchTooLarge`) in every face that launches one.
//!
//! Registers count where the kernel's count is known (ptxas's, which `racetrack run` has from
//! nvcc's toolchain): an SM's register file is split among its four sub-partitions, each
//! holding whole warps, so a kernel of 48 registers fits 10 warps in each, 40 in all. An H100
//! answered every case of `harness/tests/run_programs/registers.cu` as this model does.

/// Streaming multiprocessors.
pub const SM_COUNT: u32 = 132;
/// Shared memory one SM holds, in bytes.
pub const SHARED_PER_SM: usize = 228 * 1024;
/// Shared memory the system sets aside in every resident block (sm_80 and later).
pub const RESERVED_SHARED_PER_BLOCK: usize = 1024;
/// Threads one SM holds.
pub const THREADS_PER_SM: u32 = 2048;
/// Blocks one SM holds, whatever their size.
pub const BLOCKS_PER_SM: u32 = 32;
/// 32-bit registers in one SM's register file (and the most one block may have).
pub const REGISTERS_PER_SM: u32 = 65536;
/// The register file's parts, one per warp scheduler; a warp's registers lie in one of them.
const SUB_PARTITIONS: u32 = 4;
/// A warp's registers are allocated in units of this many.
const REGISTER_UNIT_PER_WARP: u32 = 256;
/// Threads a block may have, registers allowing.
pub const MAX_THREADS_PER_BLOCK: u32 = 1024;

/// The registers one warp of a kernel with `per_thread` registers per thread takes.
fn registers_per_warp(per_thread: u32) -> u32 {
    (per_thread.max(1) * 32).div_ceil(REGISTER_UNIT_PER_WARP) * REGISTER_UNIT_PER_WARP
}

/// How many warps of such a kernel one SM's register file holds.
fn warps_by_registers(per_thread: u32) -> u32 {
    REGISTERS_PER_SM / SUB_PARTITIONS / registers_per_warp(per_thread) * SUB_PARTITIONS
}

/// The most threads a block of a kernel with `registers` per thread may have (a launch of more
/// fails with `cudaErrorLaunchOutOfResources`); unknown registers limit nothing.
pub fn max_threads_per_block(registers: Option<u32>) -> u32 {
    registers.map_or(MAX_THREADS_PER_BLOCK, |r| {
        (warps_by_registers(r) * 32).min(MAX_THREADS_PER_BLOCK)
    })
}

/// How many blocks of this shape an SM holds at once, by threads, blocks, shared memory
/// (`shared`: static and dynamic, without the reserved part) and, when known, registers.
pub fn blocks_per_sm(block: [u32; 3], shared: usize, registers: Option<u32>) -> u64 {
    let threads = (block.iter().map(|&d| d as u64).product::<u64>()).max(1);
    let warps = threads.div_ceil(32);
    let by_threads = THREADS_PER_SM as u64 / (warps * 32);
    let by_shared = SHARED_PER_SM as u64 / (shared + RESERVED_SHARED_PER_BLOCK) as u64;
    let by_registers = registers.map_or(u64::MAX, |r| warps_by_registers(r) as u64 / warps);
    by_threads
        .min(by_shared)
        .min(by_registers)
        .min(BLOCKS_PER_SM as u64)
}

/// The most blocks a cooperative launch of this block shape may have: every one resident at
/// once, on every SM.
pub fn cooperative_grid_limit(block: [u32; 3], shared: usize, registers: Option<u32>) -> u64 {
    blocks_per_sm(block, shared, registers) * SM_COUNT as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cooperative_grid_holds_what_every_sm_holds_at_once() {
        // 1024 threads: two blocks per SM; 32 threads: the 32-block cap; half an SM's shared
        // memory each: one block, since each also has its reserved kilobyte.
        assert_eq!(cooperative_grid_limit([1024, 1, 1], 0, None), 2 * 132);
        assert_eq!(cooperative_grid_limit([32, 1, 1], 0, None), 32 * 132);
        assert_eq!(
            cooperative_grid_limit([64, 1, 1], SHARED_PER_SM / 2, None),
            132
        );
        assert_eq!(
            cooperative_grid_limit([64, 1, 1], SHARED_PER_SM / 2 - 1024, None),
            2 * 132
        );
        // A block of 33 threads takes two warps' room.
        assert_eq!(blocks_per_sm([33, 1, 1], 0, None), 2048 / 64);
    }

    #[test]
    fn registers_are_allocated_per_warp_in_each_sub_partition() {
        // 48 registers: 1,536 a warp, 10 warps in each quarter of the file, 40 in all.
        assert_eq!(blocks_per_sm([64, 1, 1], 0, Some(48)), 20);
        // 70 registers round up to 2,304 a warp: 7 warps a quarter, 28 in all.
        assert_eq!(blocks_per_sm([128, 1, 1], 0, Some(70)), 7);
        assert_eq!(max_threads_per_block(Some(70)), 28 * 32);
        assert_eq!(blocks_per_sm([1024, 1, 1], 0, Some(70)), 0);
        // Few registers limit nothing the threads do not.
        assert_eq!(blocks_per_sm([256, 1, 1], 0, Some(16)), 8);
        assert_eq!(max_threads_per_block(Some(32)), 1024);
        assert_eq!(max_threads_per_block(None), 1024);
    }
}
