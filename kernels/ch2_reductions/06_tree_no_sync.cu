// BROKEN(race): tree reduction without the barrier in the loop — fixed in 02_tree_reduction.cu
// Thread mapping: grid-stride loop over x; then thread tid adds s[tid + i] for i = blockDim/2, …, 1.
// Shared memory: one float per thread (1024 floats, 4 KiB, the largest block).
// Launch: any grid × a power-of-two block up to 1024 threads; block_sums has one float per block, added on the host.

#define MAX_THREADS 1024

// ANCHOR: kernel
extern "C" __global__ void tree_no_sync(const float *x, unsigned int n, float *block_sums)
{
    __shared__ float s[MAX_THREADS];
    unsigned int tid = threadIdx.x;
    float sum = 0.0f;
    for (unsigned int j = blockIdx.x * blockDim.x + tid; j < n; j += blockDim.x * gridDim.x) {
        sum += x[j];
    }
    s[tid] = sum;
    __syncthreads();

    // ANCHOR: tree
    for (unsigned int i = blockDim.x / 2; i > 0; i >>= 1) {
        if (tid < i) {
            s[tid] += s[tid + i]; // BUG: no __syncthreads() between steps: s[tid + i] may not hold its sum yet
        }
    }
    // ANCHOR_END: tree
    if (tid == 0) {
        block_sums[blockIdx.x] = s[0];
    }
}
// ANCHOR_END: kernel
