// FIXED: the whole ring in one kernel, for a ring whose ranks hand over by flags: step `step` adds the previous device's chunk (reduce-scatter) or copies it (all-gather).
// Thread mapping: grid-stride loop over the chunk's elements, read from the previous device through peer access.
// Shared memory: none.
// Launch: on every device, any grid × any block, after cuStreamWaitValue32 on this rank's flag; then cuStreamWriteValue32 sets the next rank's.

__device__ unsigned long long chunk_begin(unsigned long long n, unsigned int chunk, unsigned int ranks)
{
    return n * chunk / ranks;
}

// ANCHOR: kernel
// Steps 0 to ranks − 2 reduce-scatter; steps ranks − 1 to 2·ranks − 3 all-gather. The chunk
// is the one the previous device finished at its step before.
extern "C" __global__ void ring_step(float *mine, const float *previous, unsigned long long n,
                                     unsigned int rank, unsigned int step, unsigned int ranks)
{
    bool gathering = step >= ranks - 1;
    unsigned int chunk = gathering ? (rank + 2 * ranks - 1 - step) % ranks
                                   : (rank + 2 * ranks - step - 1) % ranks;
    unsigned long long begin = chunk_begin(n, chunk, ranks);
    unsigned long long end = chunk_begin(n, chunk + 1, ranks);
    for (unsigned long long j = begin + blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;
         j < end; j += (unsigned long long)blockDim.x * gridDim.x) {
        mine[j] = gathering ? previous[j] : mine[j] + previous[j];
    }
}
// ANCHOR_END: kernel
