// FIXED: two loads per thread before the tree (the CuPy/PyCUDA reduction); a second launch finishes on the device.
// Thread mapping: block b starts at 2·b·blockDim; each step a thread adds x[j] and x[j + blockDim], then strides 2·blockDim·gridDim.
// Shared memory: one float per thread (1024 floats, 4 KiB, the largest block).
// Launch: any grid × a power-of-two block up to 1024 threads, then the same kernel on the block sums with one block.

#define MAX_THREADS 1024

// ANCHOR: kernel
extern "C" __global__ void two_loads_tree(const float *x, unsigned int n, float *block_sums)
{
    __shared__ float s[MAX_THREADS];
    unsigned int tid = threadIdx.x;
    // ANCHOR: two_loads
    float sum = 0.0f;
    for (unsigned int j = 2 * blockIdx.x * blockDim.x + tid; j < n; j += 2 * blockDim.x * gridDim.x) {
        sum += x[j];
        if (j + blockDim.x < n) {
            sum += x[j + blockDim.x];
        }
    }
    // ANCHOR_END: two_loads
    s[tid] = sum;
    __syncthreads();

    for (unsigned int i = blockDim.x / 2; i > 0; i >>= 1) {
        if (tid < i) {
            s[tid] += s[tid + i];
        }
        __syncthreads();
    }
    if (tid == 0) {
        block_sums[blockIdx.x] = s[0];
    }
}
// ANCHOR_END: kernel
