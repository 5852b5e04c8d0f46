// FIXED: warp and block sums with cooperative groups: a 32-thread tile of the block, a sum by
// shuffles written out by hand and the same sum by cg::reduce, then the block's warps combined
// after block.sync().
// Thread mapping: one element per thread; lane 0 of each warp writes its warp's sum, thread 0
// of each block its block's sum.
// Shared memory: one int per warp (at most 32 warps).
// Launch: blockDim.x a multiple of 32.
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>

namespace cg = cooperative_groups;

__device__ int warp_sum_by_hand(cg::thread_block_tile<32> warp, int value)
{
    for (int offset = warp.size() / 2; offset > 0; offset /= 2) {
        value += warp.shfl_down(value, offset);
    }
    return value;
}

__global__ void tile_sums(const int *in, int *warp_sums, int *block_sums, int n)
{
    cg::thread_block block = cg::this_thread_block();
    cg::thread_block_tile<32> warp = cg::tiled_partition<32>(block);
    __shared__ int per_warp[32];
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    const int value = i < n ? in[i] : 0;
    const int by_hand = warp_sum_by_hand(warp, value);
    const int by_reduce = cg::reduce(warp, value, cg::plus<int>());
    if (warp.thread_rank() == 0) {
        warp_sums[i / 32] = by_hand;
        per_warp[warp.meta_group_rank()] = by_reduce;
    }
    block.sync();
    if (block.thread_rank() == 0) {
        int total = 0;
        for (unsigned w = 0; w < warp.meta_group_size(); ++w) {
            total += per_warp[w];
        }
        block_sums[blockIdx.x] = total;
    }
}
