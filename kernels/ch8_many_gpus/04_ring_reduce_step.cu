// FIXED: one reduce-scatter step of a ring all-reduce: add the previous device's copy of one chunk into ours.
// Thread mapping: grid-stride loop over the chunk's elements, read from the previous device through peer access.
// Shared memory: none.
// Launch: on every device, any grid × any block, after an event wait for the previous device's last step.

// ANCHOR: bounds
// Chunk c of n values split among `ranks` devices: [c·n/ranks, (c+1)·n/ranks). The chunks
// differ by at most one value and cover all n, whatever n is.
__device__ unsigned long long chunk_begin(unsigned long long n, unsigned int chunk, unsigned int ranks)
{
    return n * chunk / ranks;
}
// ANCHOR_END: bounds

// ANCHOR: kernel
extern "C" __global__ void ring_reduce_step(float *mine, const float *previous,
                                            unsigned long long n, unsigned int chunk,
                                            unsigned int ranks)
{
    unsigned long long begin = chunk_begin(n, chunk, ranks);
    unsigned long long end = chunk_begin(n, chunk + 1, ranks);
    for (unsigned long long j = begin + blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;
         j < end; j += (unsigned long long)blockDim.x * gridDim.x) {
        mine[j] += previous[j];
    }
}
// ANCHOR_END: kernel
