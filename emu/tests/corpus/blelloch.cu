// FIXED: Blelloch exclusive scan in shared memory (up-sweep, then down-sweep).
// Thread mapping: two elements per thread, one block.
// Shared memory: 2 * blockDim.x floats (dynamic); n == 2 * blockDim.x, a power of two.
// Launch: one block of n / 2 threads.

extern "C" __global__ void blelloch(const float *in, float *out, int n)
{
    extern __shared__ float temp[];
    int tid = threadIdx.x;
    int offset = 1;
    temp[2 * tid] = in[2 * tid];
    temp[2 * tid + 1] = in[2 * tid + 1];
    for (int d = n >> 1; d > 0; d >>= 1) {
        __syncthreads();
        if (tid < d) {
            int ai = offset * (2 * tid + 1) - 1;
            int bi = offset * (2 * tid + 2) - 1;
            temp[bi] += temp[ai];
        }
        offset *= 2;
    }
    if (tid == 0) {
        temp[n - 1] = 0;
    }
    for (int d = 1; d < n; d *= 2) {
        offset >>= 1;
        __syncthreads();
        if (tid < d) {
            int ai = offset * (2 * tid + 1) - 1;
            int bi = offset * (2 * tid + 2) - 1;
            float t = temp[ai];
            temp[ai] = temp[bi];
            temp[bi] += t;
        }
    }
    __syncthreads();
    out[2 * tid] = temp[2 * tid];
    out[2 * tid + 1] = temp[2 * tid + 1];
}
