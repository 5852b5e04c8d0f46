// FIXED: the block sums of every device, peer-copied into one buffer on device 0, summed there by one block.
// Thread mapping: one block; thread tid adds sums[tid], sums[tid + blockDim.x], …; then a shared-memory tree.
// Shared memory: one float per thread (1024 floats, 4 KiB, the largest block).
// Launch: one block of a power-of-two size up to 1024 threads, on device 0, after the peer copies.

#define MAX_THREADS 1024

// ANCHOR: kernel
extern "C" __global__ void sum_gathered(const float *sums, unsigned int count, float *total)
{
    __shared__ float s[MAX_THREADS];
    unsigned int tid = threadIdx.x;
    float sum = 0.0f;
    for (unsigned int j = tid; j < count; j += blockDim.x) {
        sum += sums[j];
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
        *total = s[0];
    }
}
// ANCHOR_END: kernel
