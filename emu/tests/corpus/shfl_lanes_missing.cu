// BROKEN(warp sync): a full-mask shuffle inside `if (lane < 16)`: lanes 16..31 never call it.
// Thread mapping: one warp per block; lane i holds in[i].
// Shared memory: none.
// Launch: 1 block of 32 threads; out[i] = in[i] + in[i + 8] for i < 16 — if it worked.

extern "C" __global__ void shfl_lanes_missing(const int *in, int *out)
{
    int lane = threadIdx.x % 32;
    int v = in[lane];
    if (lane < 16) {
        v += __shfl_down_sync(0xffffffff, v, 8); // BUG: the mask names lanes 16..31, which skip this
    }
    __syncthreads();
    out[lane] = v;
}
