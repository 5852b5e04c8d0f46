// FIXED: Blelloch exclusive scan in one block in shared memory, padded to a power of two with the identity.
// Thread mapping: thread t loads elements 2t and 2t + 1; at each level thread t combines one pair.
// Shared memory: 2048 unsigned ints (8 KiB), static; n <= 2048.
// Launch: 1 block × (m / 2 … 1024) threads, m = n rounded up to a power of two (at least 2).

#define MAX_N 2048

// ANCHOR: kernel
extern "C" __global__ void blelloch_shared(const unsigned int *in, unsigned int *out, unsigned int n)
{
    __shared__ unsigned int temp[MAX_N];
    unsigned int tid = threadIdx.x;
    unsigned int m = 2;
    while (m < n) {
        m *= 2;
    }
    for (unsigned int i = tid; i < m; i += blockDim.x) {
        temp[i] = i < n ? in[i] : 0; // pad with the identity
    }
    // ANCHOR: up_sweep
    unsigned int offset = 1;
    for (unsigned int d = m / 2; d > 0; d /= 2) {
        __syncthreads();
        if (tid < d) {
            unsigned int ai = offset * (2 * tid + 1) - 1; // banks: stride 2·offset words apart
            unsigned int bi = offset * (2 * tid + 2) - 1;
            temp[bi] += temp[ai];
        }
        offset *= 2;
    }
    // ANCHOR_END: up_sweep
    // ANCHOR: down_sweep
    if (tid == 0) {
        temp[m - 1] = 0;
    }
    for (unsigned int d = 1; d < m; d *= 2) {
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
    // ANCHOR_END: down_sweep
    __syncthreads();
    for (unsigned int i = tid; i < n; i += blockDim.x) {
        out[i] = temp[i];
    }
}
// ANCHOR_END: kernel
