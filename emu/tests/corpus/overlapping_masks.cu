// BROKEN(warp sync): lanes 0..15 sync with the lower half's mask while lanes 16..31 pass the
// whole warp's, so the two masks overlap without being equal — fixed in half_warp_groups.cu.
// Thread mapping: one warp; lane i writes buf[i], then reads its neighbour's.
// Shared memory: 32 ints.
// Launch: 1 block of 32 threads; out[i] = i ^ 1.

extern "C" __global__ void overlapping_masks(int *out)
{
    __shared__ int buf[32];
    int lane = threadIdx.x % 32;
    buf[lane] = lane;
    __syncwarp(lane < 16 ? 0x0000ffffu : 0xffffffffu); // BUG: lanes 16..31 name lanes 0..15, which pass another mask
    out[lane] = buf[lane ^ 1];
}
