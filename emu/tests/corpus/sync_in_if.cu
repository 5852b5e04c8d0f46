// BROKEN(barrier divergence): __syncthreads() inside if (tid < i) — fixed in tree_reduce.cu
// Thread mapping: one element per thread.
// Shared memory: blockDim.x floats (dynamic).
// Launch: blockDim.x a power of two; out has gridDim.x floats.

extern "C" __global__ void sync_in_if(const float *in, float *out, int n)
{
    extern __shared__ float sdata[];
    unsigned int tid = threadIdx.x;
    unsigned int i = blockIdx.x * blockDim.x + tid;
    sdata[tid] = i < n ? in[i] : 0.0f;
    __syncthreads();
    for (unsigned int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (tid < s) {
            sdata[tid] += sdata[tid + s];
            __syncthreads(); // BUG: only threads with tid < s reach this barrier
        }
    }
    if (tid == 0) {
        out[blockIdx.x] = sdata[0];
    }
}
