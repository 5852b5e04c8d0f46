// FIXED: each half of the warp is its own group: __syncwarp and __shfl_xor_sync with the half's
// mask, as two cooperative_groups::thread_block_tile<16> of one warp do.
// Thread mapping: one warp; lane i writes buf[i], then sums its half with shuffles.
// Shared memory: 32 ints.
// Launch: 1 block of 32 threads; out[i] = buf[i ^ 1] + 1000 * (sum of its half's lanes).

extern "C" __global__ void half_warp_groups(int *out)
{
    __shared__ int buf[32];
    int lane = threadIdx.x % 32;
    unsigned half = lane < 16 ? 0x0000ffffu : 0xffff0000u;
    buf[lane] = lane;
    __syncwarp(half);
    int sum = lane;
    for (int offset = 8; offset > 0; offset /= 2) {
        sum += __shfl_xor_sync(half, sum, offset, 16);
    }
    out[lane] = buf[lane ^ 1] + 1000 * sum;
}
