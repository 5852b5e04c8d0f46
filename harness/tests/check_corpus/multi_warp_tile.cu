// FIXED: cooperative groups' tiles wider than a warp: a 64-thread tile of a 128-thread block
// sums its values with cg::reduce, which keeps its cross-warp barrier and scratch in the block's
// reserved shared memory (block_tile_memory asks for it).
// Thread mapping: one element per thread; rank 0 of each tile writes the tile's sum.
// Shared memory: block_tile_memory<128> (the reserved region).
// Launch: blocks of 128 threads; out has two sums per block.
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>

namespace cg = cooperative_groups;

__global__ void tile_sums(const int *in, int *out)
{
    __shared__ cg::block_tile_memory<128> scratch;
    cg::thread_block block = cg::this_thread_block(scratch);
    auto tile = cg::tiled_partition<64>(block);
    int value = in[blockIdx.x * blockDim.x + threadIdx.x];
    int sum = cg::reduce(tile, value, cg::plus<int>());
    if (tile.thread_rank() == 0) {
        out[blockIdx.x * 2 + tile.meta_group_rank()] = sum;
    }
}
