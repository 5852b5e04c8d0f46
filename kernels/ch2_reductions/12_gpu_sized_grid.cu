// FIXED: a grid sized to the GPU (one wave of resident blocks), each thread with four float4 loads in flight.
// Thread mapping: thread g of the grid takes float4 numbers g, g + T, g + 2T, g + 3T (T the grid's threads), loads all four before adding any, then moves on by 4T; the rest one float4 at a time, the last n % 4 floats by the grid's first threads.
// Shared memory: one float per warp (32 floats, 128 bytes).
// Launch: as many blocks as the GPU keeps resident (multiprocessors × blocks per multiprocessor) × a block of a multiple of 32 threads up to 1024, at most 2^28 threads, then the same kernel on the block sums with one block; x 16-byte aligned.

#define FULL_MASK 0xffffffffu
#define WARP_SIZE 32
#define LOADS_IN_FLIGHT 4

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
extern "C" __global__ void gpu_sized_grid(const float *x, unsigned int n, float *block_sums)
{
    const float4 *x4 = reinterpret_cast<const float4 *>(x);
    unsigned int n4 = n / 4;
    unsigned int first = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned int stride = blockDim.x * gridDim.x;
    float sum = 0.0f;
    // ANCHOR: in_flight
    // Below `unrolled_end` all four loads of a step are in bounds.
    unsigned int unrolled_end = n4 > (LOADS_IN_FLIGHT - 1) * stride ? n4 - (LOADS_IN_FLIGHT - 1) * stride : 0;
    unsigned int j = first;
    for (; j < unrolled_end; j += LOADS_IN_FLIGHT * stride) {
        float4 v[LOADS_IN_FLIGHT];
#pragma unroll
        for (int k = 0; k < LOADS_IN_FLIGHT; k++) {
            v[k] = x4[j + k * stride];
        }
#pragma unroll
        for (int k = 0; k < LOADS_IN_FLIGHT; k++) {
            sum += (v[k].x + v[k].y) + (v[k].z + v[k].w);
        }
    }
    // ANCHOR_END: in_flight
    for (; j < n4; j += stride) {
        float4 v = x4[j];
        sum += (v.x + v.y) + (v.z + v.w);
    }
    if (4 * n4 + first < n) {
        sum += x[4 * n4 + first];
    }
    sum = block_sum(sum);
    if (threadIdx.x == 0) {
        block_sums[blockIdx.x] = sum;
    }
}
// ANCHOR_END: kernel
