// BROKEN(wrong result): chunks of n / ranks values: when ranks does not divide n, the last n % ranks values are never added — fixed in 04_ring_reduce_step.cu.
// Thread mapping: grid-stride loop over the chunk's elements, read from the previous device through peer access.
// Shared memory: none.
// Launch: on every device, any grid × any block, after an event wait for the previous device's last step.

// ANCHOR: kernel
extern "C" __global__ void ring_step_wrong_offset(float *mine, const float *previous,
                                                  unsigned long long n, unsigned int chunk,
                                                  unsigned int ranks)
{
    unsigned long long per_chunk = n / ranks;
    unsigned long long begin = chunk * per_chunk;
    unsigned long long end = begin + per_chunk; // BUG: the last chunk stops n % ranks values short
    for (unsigned long long j = begin + blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;
         j < end; j += (unsigned long long)blockDim.x * gridDim.x) {
        mine[j] += previous[j];
    }
}
// ANCHOR_END: kernel
