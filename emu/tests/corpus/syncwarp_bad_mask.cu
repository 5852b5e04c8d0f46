// BROKEN(warp sync): lanes 16..31 call __syncwarp with a mask that leaves them out.
// Thread mapping: one warp; lane i writes buf[i], then reads its neighbour's.
// Shared memory: 32 ints.
// Launch: 1 block of 32 threads; out[i] = i ^ 1.

extern "C" __global__ void syncwarp_bad_mask(int *out)
{
    __shared__ int buf[32];
    int lane = threadIdx.x % 32;
    buf[lane] = lane;
    __syncwarp(0x0000ffff); // BUG: only lanes 0..15 are in the mask, but every lane calls it
    out[lane] = buf[lane ^ 1];
}
