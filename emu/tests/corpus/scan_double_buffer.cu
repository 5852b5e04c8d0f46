// FIXED: Hillis–Steele inclusive scan with two buffers, swapped each step.
// Thread mapping: one element per thread, one block.
// Shared memory: 2 * blockDim.x ints (dynamic).
// Launch: one block of n threads.

extern "C" __global__ void scan_double_buffer(const int *in, int *out, int n)
{
    extern __shared__ int temp[];
    int tid = threadIdx.x;
    int pout = 0, pin = 1;
    temp[tid] = tid < n ? in[tid] : 0;
    __syncthreads();
    for (int offset = 1; offset < blockDim.x; offset *= 2) {
        pout = 1 - pout;
        pin = 1 - pout;
        if (tid >= offset) {
            temp[pout * blockDim.x + tid] = temp[pin * blockDim.x + tid] + temp[pin * blockDim.x + tid - offset];
        } else {
            temp[pout * blockDim.x + tid] = temp[pin * blockDim.x + tid];
        }
        __syncthreads();
    }
    if (tid < n) {
        out[tid] = temp[pout * blockDim.x + tid];
    }
}
