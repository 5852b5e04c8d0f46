// FIXED: Blelloch exclusive scan of any length, one launch per level: the host is the barrier between levels.
// Thread mapping: at a level of stride s, thread k updates element (k + 1) · s − 1 of the padded array.
// Shared memory: none; data lives in global memory, padded with the identity 0 to a power of two m >= 2.
// Launch: per level, ⌈(m / s) / blockDim⌉ blocks × any block; log₂ m up-sweep launches, then log₂ m down-sweep launches.

// ANCHOR: up_sweep
extern "C" __global__ void blelloch_up_sweep(unsigned int *data, unsigned int m, unsigned int stride)
{
    unsigned int k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k < m / stride) {
        unsigned int right = (k + 1) * stride - 1;
        unsigned int left = right - stride / 2;
        data[right] += data[left];
    }
}
// ANCHOR_END: up_sweep

// ANCHOR: down_sweep
extern "C" __global__ void blelloch_down_sweep(unsigned int *data, unsigned int m, unsigned int stride)
{
    unsigned int k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k < m / stride) {
        unsigned int right = (k + 1) * stride - 1;
        unsigned int left = right - stride / 2;
        // The first level (stride == m) clears the root: the sum of nothing is the identity.
        unsigned int above = stride == m ? 0 : data[right];
        unsigned int t = data[left];
        data[left] = above;
        data[right] = above + t;
    }
}
// ANCHOR_END: down_sweep
