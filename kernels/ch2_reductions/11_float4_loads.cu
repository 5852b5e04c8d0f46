// FIXED: the warp-shuffle reduction reading 16 bytes per load: one float4 (four floats) per thread and step.
// Thread mapping: thread g of the grid adds float4 number g, g + threads, …; the last n % 4 floats go to the grid's first threads; then the block's sum by shuffles as in 10_warp_shuffle.cu.
// Shared memory: one float per warp (32 floats, 128 bytes).
// Launch: any grid × a block of a multiple of 32 threads up to 1024, then the same kernel on the block sums with one block; x must be 16-byte aligned (every device allocation is).

#define FULL_MASK 0xffffffffu
#define WARP_SIZE 32

__device__ float warp_sum(float value)
{
    for (int offset = WARP_SIZE / 2; offset > 0; offset /= 2) {
        value += __shfl_down_sync(FULL_MASK, value, offset);
    }
    return value;
}

__device__ float block_sum(float value)
{
    __shared__ float warp_sums[WARP_SIZE];
    unsigned int lane = threadIdx.x % WARP_SIZE;
    unsigned int warp = threadIdx.x / WARP_SIZE;
    value = warp_sum(value);
    if (lane == 0) {
        warp_sums[warp] = value;
    }
    __syncthreads();
    if (warp == 0) {
        value = lane < blockDim.x / WARP_SIZE ? warp_sums[lane] : 0.0f;
        value = warp_sum(value);
    }
    return value;
}

// ANCHOR: kernel
extern "C" __global__ void float4_loads(const float *x, unsigned int n, float *block_sums)
{
    // ANCHOR: float4
    const float4 *x4 = reinterpret_cast<const float4 *>(x);
    unsigned int n4 = n / 4;
    unsigned int first = blockIdx.x * blockDim.x + threadIdx.x;
    float sum = 0.0f;
    for (unsigned int j = first; j < n4; j += blockDim.x * gridDim.x) {
        float4 v = x4[j];
        sum += (v.x + v.y) + (v.z + v.w);
    }
    if (4 * n4 + first < n) {
        sum += x[4 * n4 + first];
    }
    // ANCHOR_END: float4
    sum = block_sum(sum);
    if (threadIdx.x == 0) {
        block_sums[blockIdx.x] = sum;
    }
}
// ANCHOR_END: kernel
