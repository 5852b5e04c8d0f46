// BROKEN(does not compile): a warp sum with __shfl_down, which CUDA 9 replaced by
// __shfl_down_sync and compute capability 7.0 and later no longer have; NVRTC says the name is
// undefined, and check adds the _sync form to write instead.
// Thread mapping: one value per lane; lane 0 writes its warp's sum.
// Shared memory: none.
// Launch: whole warps.

__global__ void warp_sums(const float *in, float *out)
{
    float v = in[blockIdx.x * blockDim.x + threadIdx.x];
    for (int offset = 16; offset > 0; offset /= 2) {
        v += __shfl_down(v, offset); // BUG: removed for sm_70 and later; __shfl_down_sync
    }
    if (threadIdx.x % 32 == 0) {
        out[(blockIdx.x * blockDim.x + threadIdx.x) / 32] = v;
    }
}
