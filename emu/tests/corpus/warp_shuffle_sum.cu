// FIXED: block sum with warp shuffles: each warp reduces with __shfl_down_sync, warp 0 adds the warp sums.
// Thread mapping: grid-stride accumulation, then one partial per block.
// Shared memory: 32 floats.
// Launch: blockDim.x a multiple of 32, at most 1024; out has gridDim.x floats.

__device__ float warp_sum(float v)
{
    for (int offset = 16; offset > 0; offset >>= 1) {
        v += __shfl_down_sync(0xffffffffu, v, offset);
    }
    return v;
}

extern "C" __global__ void warp_shuffle_sum(const float *in, float *out, int n)
{
    __shared__ float warp_sums[32];
    float v = 0.0f;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
        v += in[i];
    }
    v = warp_sum(v);
    int lane = threadIdx.x % 32;
    int warp = threadIdx.x / 32;
    if (lane == 0) {
        warp_sums[warp] = v;
    }
    __syncthreads();
    if (warp == 0) {
        v = lane < blockDim.x / 32 ? warp_sums[lane] : 0.0f;
        v = warp_sum(v);
        if (lane == 0) {
            out[blockIdx.x] = v;
        }
    }
}
