// BROKEN(race): Hillis–Steele scan in one buffer; a thread may read a value already updated this step — fixed in scan_double_buffer.cu
// Thread mapping: one element per thread, one block.
// Shared memory: blockDim.x ints (dynamic).
// Launch: one block of n threads.

extern "C" __global__ void scan_single_buffer(const int *in, int *out, int n)
{
    extern __shared__ int buf[];
    int tid = threadIdx.x;
    buf[tid] = tid < n ? in[tid] : 0;
    __syncthreads();
    for (int offset = 1; offset < blockDim.x; offset *= 2) {
        if (tid >= offset) {
            buf[tid] += buf[tid - offset]; // BUG: reads a neighbour that may already have been updated this step
        }
        __syncthreads();
    }
    if (tid < n) {
        out[tid] = buf[tid];
    }
}
