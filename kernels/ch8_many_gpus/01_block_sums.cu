// FIXED: each device sums its own slice into one float per block; the host adds every device's block sums.
// Thread mapping: grid-stride loop over the slice; then a shared-memory tree in each block.
// Shared memory: one float per thread (1024 floats, 4 KiB, the largest block).
// Launch: on every device, any grid × a power-of-two block up to 1024 threads, over that device's slice.

#define MAX_THREADS 1024

// ANCHOR: kernel
extern "C" __global__ void block_sums(const float *slice, unsigned long long n, float *sums)
{
    __shared__ float s[MAX_THREADS];
    unsigned int tid = threadIdx.x;
    float sum = 0.0f;
    for (unsigned long long j = blockIdx.x * (unsigned long long)blockDim.x + tid; j < n;
         j += (unsigned long long)blockDim.x * gridDim.x) {
        sum += slice[j];
    }
    s[tid] = sum;
    __syncthreads();
    for (unsigned int i = blockDim.x / 2; i > 0; i >>= 1) {
        if (tid < i) {
            s[tid] += s[tid + i];
        }
        __syncthreads();
    }
    if (tid == 0) {
        sums[blockIdx.x] = s[0];
    }
}
// ANCHOR_END: kernel
