// FIXED: dot product in one launch, each block adding its sum straight into *c with atomicAdd: no block sums, no counter, no last block, and a result whose last bits depend on the order the blocks arrive in.
// Thread mapping: as 08_dot_vectorized.cu; then thread 0 of each block adds the block's sum to *c.
// Shared memory: one float per warp (32 floats, the largest block).
// Launch: any grid × a power-of-two block of 32 to 1024 threads; *c zeroed before every launch.

#define FULL_WARP 0xffffffffu

__device__ float warp_sum(float value)
{
    for (unsigned int offset = 16; offset > 0; offset >>= 1) {
        value += __shfl_down_sync(FULL_WARP, value, offset);
    }
    return value;
}

// The sum of every thread's `value`, in thread 0; a barrier first, so `warp_sums` can be reused.
__device__ float block_sum(float value, float *warp_sums)
{
    unsigned int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    value = warp_sum(value);
    __syncthreads();
    if (lane == 0) {
        warp_sums[warp] = value;
    }
    __syncthreads();
    if (warp == 0) {
        value = warp_sum(lane < blockDim.x / 32 ? warp_sums[lane] : 0.0f);
    }
    return value;
}

// ANCHOR: kernel
extern "C" __global__ void dot_atomic_add(const float *a, const float *b, unsigned int n, float *c)
{
    __shared__ float warp_sums[32];
    unsigned int tid = threadIdx.x;
    unsigned int first = blockIdx.x * blockDim.x + tid, stride = blockDim.x * gridDim.x;
    float sum = 0.0f;
    const float4 *a4 = reinterpret_cast<const float4 *>(a);
    const float4 *b4 = reinterpret_cast<const float4 *>(b);
    for (unsigned int j = first; j < n / 4; j += stride) {
        float4 x = a4[j], y = b4[j];
        sum += x.x * y.x;
        sum += x.y * y.y;
        sum += x.z * y.z;
        sum += x.w * y.w;
    }
    for (unsigned int j = n / 4 * 4 + first; j < n; j += stride) {
        sum += a[j] * b[j];
    }
    sum = block_sum(sum, warp_sums);
    if (tid == 0) {
        // One atomic per block: none is lost, but the order of the additions is the blocks'.
        atomicAdd(c, sum);
    }
}
// ANCHOR_END: kernel
