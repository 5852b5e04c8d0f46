// FIXED: two-stage sum: grid-stride partial per thread, then a shared-memory tree per block.
// Thread mapping: grid-stride loop, so any grid covers any length; thread 0 of each block writes one partial.
// Shared memory: THREADS_PER_BLOCK floats per block (4 KiB), static.
// Launch: blockDim.x == THREADS_PER_BLOCK (a power of two), any gridDim.x; partial has gridDim.x floats, summed by the host.

#define THREADS_PER_BLOCK 1024u

extern "C" __global__ void reduce_better(const float *x, unsigned int n, float *partial)
{
    __shared__ float block_sums[THREADS_PER_BLOCK];
    unsigned int tid = threadIdx.x;
    unsigned int stride = blockDim.x * gridDim.x;

    float mine = 0.0f;
    for (unsigned int i = blockIdx.x * blockDim.x + tid; i < n; i += stride) {
        mine += x[i];
    }
    block_sums[tid] = mine;
    __syncthreads();

    for (unsigned int half = THREADS_PER_BLOCK / 2; half > 0; half /= 2) {
        if (tid < half) {
            block_sums[tid] += block_sums[tid + half];
        }
        __syncthreads();
    }

    if (tid == 0) {
        partial[blockIdx.x] = block_sums[0];
    }
}
