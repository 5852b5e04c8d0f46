// BROKEN(race): 05's all-gather step, queued without waiting for the previous device's event: it may copy a chunk before the previous device has finished summing it — fixed in 05_ring_gather_step.cu.
// Thread mapping: grid-stride loop over the chunk's elements, read from the previous device through peer access.
// Shared memory: none.
// Launch: on every device, any grid × any block — and the host forgets cudaStreamWaitEvent before it.

__device__ unsigned long long chunk_begin(unsigned long long n, unsigned int chunk, unsigned int ranks)
{
    return n * chunk / ranks;
}

// ANCHOR: kernel
extern "C" __global__ void ring_gather_without_wait(float *mine, const float *previous,
                                                    unsigned long long n, unsigned int chunk,
                                                    unsigned int ranks)
{
    unsigned long long begin = chunk_begin(n, chunk, ranks);
    unsigned long long end = chunk_begin(n, chunk + 1, ranks);
    for (unsigned long long j = begin + blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;
         j < end; j += (unsigned long long)blockDim.x * gridDim.x) {
        mine[j] = previous[j]; // BUG: nothing ordered this copy after the previous device's last step
    }
}
// ANCHOR_END: kernel
