// FIXED: warp and lane numbers from warpSize (PTX's WARP_SZ), and a row offset from __umul24.
// Thread mapping: thread t of block b writes out[b * blockDim.x + t].
// Shared memory: none.
// Launch: 2 blocks of 64 threads; out[i] = 1000 * warp + 10 * lane-in-warp-mod-8 + b.

extern "C" __global__ void warp_size_math(unsigned *out)
{
    unsigned warp = threadIdx.x / warpSize;
    unsigned lane = threadIdx.x % warpSize;
    unsigned row = __umul24(blockIdx.x, blockDim.x);
    out[row + threadIdx.x] = 1000 * warp + 10 * (lane % 8) + blockIdx.x;
}
