// BROKEN(race): the seed's one-buffer Hillis–Steele: a thread may read a neighbour already updated this step — fixed in 01_hillis_steele_double_buffer.cu
// Thread mapping: thread i owns element i; one block of at least n threads (n <= 1024).
// Shared memory: 1024 unsigned ints (4 KiB), static.
// Launch: 1 block × (n … 1024) threads.

#define MAX_N 1024

// ANCHOR: kernel
extern "C" __global__ void hillis_steele_single_buffer(const unsigned int *in, unsigned int *out,
                                                       unsigned int n)
{
    __shared__ unsigned int sum_buf[MAX_N];
    unsigned int tid = threadIdx.x;
    sum_buf[tid] = tid < n ? in[tid] : 0;
    __syncthreads();
    for (unsigned int iter = 1; iter < n; iter *= 2) {
        if (tid >= iter) {
            sum_buf[tid] += sum_buf[tid - iter]; // BUG: thread tid - iter may already have added to sum_buf[tid - iter] this step
        }
        __syncthreads();
    }
    if (tid < n) {
        out[tid] = sum_buf[tid];
    }
}
// ANCHOR_END: kernel
