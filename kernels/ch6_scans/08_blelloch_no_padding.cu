// BROKEN(wrong result): Blelloch in shared memory on n itself, not padded to a power of two — fixed in 03_blelloch_shared.cu
// Thread mapping: thread t loads elements 2t and 2t + 1; at each level thread t combines one pair.
// Shared memory: 2048 unsigned ints (8 KiB), static; n <= 2048.
// Launch: 1 block × (⌈n / 2⌉ … 1024) threads.

#define MAX_N 2048

// ANCHOR: kernel
extern "C" __global__ void blelloch_no_padding(const unsigned int *in, unsigned int *out, unsigned int n)
{
    __shared__ unsigned int temp[MAX_N];
    unsigned int tid = threadIdx.x;
    for (unsigned int i = tid; i < n; i += blockDim.x) {
        temp[i] = in[i];
    }
    unsigned int offset = 1;
    for (unsigned int d = n / 2; d > 0; d /= 2) { // BUG: the levels form one tree only when n is a power of two; for n = 6 the last pair never reaches the root
        __syncthreads();
        if (tid < d) {
            unsigned int ai = offset * (2 * tid + 1) - 1;
            unsigned int bi = offset * (2 * tid + 2) - 1;
            temp[bi] += temp[ai];
        }
        offset *= 2;
    }
    __syncthreads();
    if (tid == 0) {
        temp[n - 1] = 0;
    }
    for (unsigned int d = 1; d <= n / 2; d *= 2) { // as many levels as the up-sweep, so every index stays inside temp
        offset /= 2;
        __syncthreads();
        if (tid < d) {
            unsigned int ai = offset * (2 * tid + 1) - 1;
            unsigned int bi = offset * (2 * tid + 2) - 1;
            unsigned int t = temp[ai];
            temp[ai] = temp[bi];
            temp[bi] += t;
        }
    }
    __syncthreads();
    for (unsigned int i = tid; i < n; i += blockDim.x) {
        out[i] = temp[i];
    }
}
// ANCHOR_END: kernel
