// FIXED: dot product with warp shuffles: each warp adds its 32 sums in registers with __shfl_down_sync, so the block needs one shared slot per warp and one barrier instead of a tree of log2(blockDim) barriers.
// Thread mapping: grid-stride loop over n multiplying a[j] * b[j]; each warp halves its 32 sums down to lane 0; warp 0 then does the same with the warps' sums.
// Shared memory: one float per warp (32 floats, the largest block).
// Launch: any grid × a power-of-two block of 32 to 1024 threads; partial has one float per block.

#define FULL_WARP 0xffffffffu

// ANCHOR: warp_sum
__device__ float warp_sum(float value)
{
    for (unsigned int offset = 16; offset > 0; offset >>= 1) {
        value += __shfl_down_sync(FULL_WARP, value, offset);
    }
    return value;
}
// ANCHOR_END: warp_sum

// ANCHOR: kernel
extern "C" __global__ void dot_warp_shuffle(const float *a, const float *b, unsigned int n, float *partial)
{
    __shared__ float warp_sums[32];
    unsigned int tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
    float sum = 0.0f;
    for (unsigned int j = blockIdx.x * blockDim.x + tid; j < n; j += blockDim.x * gridDim.x) {
        sum += a[j] * b[j];
    }
    // ANCHOR: block_sum
    sum = warp_sum(sum);
    if (lane == 0) {
        warp_sums[warp] = sum;
    }
    __syncthreads();
    if (warp == 0) {
        sum = warp_sum(lane < blockDim.x / 32 ? warp_sums[lane] : 0.0f);
        if (lane == 0) {
            partial[blockIdx.x] = sum;
        }
    }
    // ANCHOR_END: block_sum
}
// ANCHOR_END: kernel
