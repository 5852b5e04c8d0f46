// FIXED: the two-loads reduction with its tree in registers: warps add with shuffles, not shared memory.
// Thread mapping: as 03_two_loads_tree.cu (two loads per step, grid-stride); then each warp adds its 32 sums with __shfl_down_sync, and warp 0 adds the warps' sums.
// Shared memory: one float per warp (32 floats, 128 bytes).
// Launch: any grid × a block of a multiple of 32 threads up to 1024, then the same kernel on the block sums with one block.

#define FULL_MASK 0xffffffffu
#define WARP_SIZE 32

// ANCHOR: warp_sum
// After the loop, lane 0 holds the sum of the warp's 32 values: at each step a lane adds the
// value `offset` lanes above it, read straight from that lane's register.
__device__ float warp_sum(float value)
{
    for (int offset = WARP_SIZE / 2; offset > 0; offset /= 2) {
        value += __shfl_down_sync(FULL_MASK, value, offset);
    }
    return value;
}
// ANCHOR_END: warp_sum

// ANCHOR: block_sum
// The block's sum, in thread 0: one shuffle tree per warp, one barrier, one more tree.
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
// ANCHOR_END: block_sum

// ANCHOR: kernel
extern "C" __global__ void warp_shuffle(const float *x, unsigned int n, float *block_sums)
{
    float sum = 0.0f;
    for (unsigned int j = 2 * blockIdx.x * blockDim.x + threadIdx.x; j < n; j += 2 * blockDim.x * gridDim.x) {
        sum += x[j];
        if (j + blockDim.x < n) {
            sum += x[j + blockDim.x];
        }
    }
    sum = block_sum(sum);
    if (threadIdx.x == 0) {
        block_sums[blockIdx.x] = sum;
    }
}
// ANCHOR_END: kernel
