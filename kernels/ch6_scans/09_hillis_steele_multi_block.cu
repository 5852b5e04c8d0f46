// BROKEN(wrong result): Hillis–Steele on a grid of blocks for n > 1024: each block scans only its own tile — fixed in 04_large_array_scan.cu
// Thread mapping: thread i = blockIdx.x · blockDim.x + threadIdx.x owns element i.
// Shared memory: 2 × 1024 unsigned ints (8 KiB) per block, static.
// Launch: ⌈n / blockDim⌉ blocks × blockDim threads.

#define MAX_BLOCK 1024

// ANCHOR: kernel
extern "C" __global__ void hillis_steele_multi_block(const unsigned int *in, unsigned int *out,
                                                     unsigned int n)
{
    __shared__ unsigned int buf[2][MAX_BLOCK];
    unsigned int tid = threadIdx.x;
    unsigned int i = blockIdx.x * blockDim.x + tid;
    int from = 0;
    buf[from][tid] = i < n ? in[i] : 0;
    __syncthreads();
    for (unsigned int offset = 1; offset < blockDim.x; offset *= 2) {
        unsigned int sum = buf[from][tid];
        if (tid >= offset) { // BUG: element i − offset of the previous block is in that block's shared memory, and no barrier waits for it
            sum += buf[from][tid - offset];
        }
        buf[1 - from][tid] = sum;
        from = 1 - from;
        __syncthreads();
    }
    if (i < n) {
        out[i] = buf[from][tid];
    }
}
// ANCHOR_END: kernel
