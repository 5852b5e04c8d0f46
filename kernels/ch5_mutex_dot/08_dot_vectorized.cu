// FIXED: vectorized dot product: each thread loads four floats of a and four of b per instruction (float4, 16 bytes), so a warp asks memory for 512 contiguous bytes of each vector at a time.
// Thread mapping: grid-stride loop over the n / 4 float4s of a and b, adding the four products in order; the last n % 4 values one per thread; then warp shuffles as in 07_dot_warp_shuffle.cu.
// Shared memory: one float per warp (32 floats, the largest block).
// Launch: any grid × a power-of-two block of 32 to 1024 threads; a and b 16-byte aligned (as every device allocation is); partial has one float per block.

#define FULL_WARP 0xffffffffu

__device__ float warp_sum(float value)
{
    for (unsigned int offset = 16; offset > 0; offset >>= 1) {
        value += __shfl_down_sync(FULL_WARP, value, offset);
    }
    return value;
}

// ANCHOR: kernel
extern "C" __global__ void dot_vectorized(const float *a, const float *b, unsigned int n, float *partial)
{
    __shared__ float warp_sums[32];
    unsigned int tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
    unsigned int first = blockIdx.x * blockDim.x + tid, stride = blockDim.x * gridDim.x;
    float sum = 0.0f;
    // ANCHOR: loads
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
    // ANCHOR_END: loads
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
}
// ANCHOR_END: kernel
