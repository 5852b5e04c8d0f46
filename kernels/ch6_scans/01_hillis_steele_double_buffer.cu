// FIXED: Hillis–Steele inclusive scan in one block, double-buffered: each step reads one buffer and writes the other.
// Thread mapping: thread i owns element i; one block of at least n threads (n <= 1024, any n).
// Shared memory: 2 × 1024 unsigned ints (8 KiB), static.
// Launch: 1 block × (n … 1024) threads; threads past n hold the identity, 0.

#define MAX_N 1024

// ANCHOR: kernel
extern "C" __global__ void hillis_steele_double_buffer(const unsigned int *in, unsigned int *out,
                                                       unsigned int n)
{
    __shared__ unsigned int buf[2][MAX_N];
    unsigned int tid = threadIdx.x;
    int from = 0;
    buf[from][tid] = tid < n ? in[tid] : 0;
    __syncthreads();
    // ANCHOR: step
    for (unsigned int offset = 1; offset < n; offset *= 2) {
        unsigned int sum = buf[from][tid];
        if (tid >= offset) {
            sum += buf[from][tid - offset];
        }
        buf[1 - from][tid] = sum; // the other buffer: nobody reads it during this step
        from = 1 - from;
        __syncthreads();
    }
    // ANCHOR_END: step
    if (tid < n) {
        out[tid] = buf[from][tid];
    }
}
// ANCHOR_END: kernel
