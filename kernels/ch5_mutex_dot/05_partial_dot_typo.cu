// BROKEN(wrong result): `s_block[tid + 1]` typed for `s_block[tid + i]`: a few tenths of a percent off — fixed in 04_partial_dot.cu
// Thread mapping: grid-stride loop over n multiplying a[j] * b[j]; then thread tid adds s_block[tid + 1] (sic) for i = blockDim/2, …, 1.
// Shared memory: one float per thread (1024 floats, 4 KiB, the largest block).
// Launch: any grid × a power-of-two block up to 1024 threads; partial has one float per block.

#define MAX_THREADS 1024

// ANCHOR: kernel
extern "C" __global__ void partial_dot_typo(const float *a, const float *b, unsigned int n, float *partial)
{
    __shared__ float s_block[MAX_THREADS];
    unsigned int tid = threadIdx.x;
    float sum = 0.0f;
    for (unsigned int j = blockIdx.x * blockDim.x + tid; j < n; j += blockDim.x * gridDim.x) {
        sum += a[j] * b[j];
    }
    s_block[tid] = sum;
    __syncthreads();

    // ANCHOR: tree
    for (unsigned int i = blockDim.x / 2; i > 0; i >>= 1) {
        if (tid < i) {
            s_block[tid] += s_block[tid + 1]; // BUG: 1 for i: neighbours are added instead of the far half
        }
        __syncthreads();
    }
    // ANCHOR_END: tree
    if (tid == 0) {
        partial[blockIdx.x] = s_block[0];
    }
}
// ANCHOR_END: kernel
