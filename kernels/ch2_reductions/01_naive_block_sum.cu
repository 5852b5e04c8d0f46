// FIXED: naive block sum: each thread sums a grid-stride slice, then thread 0 adds up its block.
// Thread mapping: grid-stride loop over x; thread 0 of each block sums the block's shared array.
// Shared memory: one float per thread (1024 floats, 4 KiB, the largest block).
// Launch: any grid × any block up to 1024 threads; block_sums has one float per block, added on the host.

#define MAX_THREADS 1024

// ANCHOR: kernel
extern "C" __global__ void naive_block_sum(const float *x, unsigned int n, float *block_sums)
{
    __shared__ float partial[MAX_THREADS];
    unsigned int tid = threadIdx.x;
    // ANCHOR: grid_stride
    float sum = 0.0f;
    for (unsigned int j = blockIdx.x * blockDim.x + tid; j < n; j += blockDim.x * gridDim.x) {
        sum += x[j];
    }
    // ANCHOR_END: grid_stride
    partial[tid] = sum;
    __syncthreads();

    if (tid == 0) {
        float block_sum = 0.0f;
        for (unsigned int k = 0; k < blockDim.x; k++) {
            block_sum += partial[k];
        }
        block_sums[blockIdx.x] = block_sum;
    }
}
// ANCHOR_END: kernel
