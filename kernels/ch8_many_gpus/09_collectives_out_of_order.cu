// BROKEN(deadlock): 08's ring step, but the ranks issue two all-reduces in different orders (odd ranks B before A): each waits for a flag that only a collective the other has not reached would set, and every GPU waits forever — fixed in 08_ring_step_by_flags.cu, whose ranks agree on the order.
// Thread mapping: grid-stride loop over the chunk's elements, read from the previous device through peer access.
// Shared memory: none.
// Launch: on every device, any grid × any block, behind cuStreamWaitValue32 on this rank's flag of the collective — issued in a different order on odd ranks, so never run on a GPU.

__device__ unsigned long long chunk_begin(unsigned long long n, unsigned int chunk, unsigned int ranks)
{
    return n * chunk / ranks;
}

// ANCHOR: kernel
// Nothing here is wrong: it is 08's kernel, and its first steps run. The bug is the order the
// host issues the collectives in (the out_of_order anchor of the chapter's lib.rs); the
// emulator's synchronize reports it, naming where each device's stream stopped.
extern "C" __global__ void ring_step_out_of_order(float *mine, const float *previous,
                                                  unsigned long long n, unsigned int rank,
                                                  unsigned int step, unsigned int ranks)
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
