// FIXED: dot product in one launch: each block writes its sum, and the last block to finish (found with a fence, atomicInc on a counter, and a fence after it) adds all the block sums in a fixed order and writes the result.
// Thread mapping: as 08_dot_vectorized.cu; then thread 0 publishes the block's sum; in the last block, thread t adds block sums t, t + blockDim, … and the block reduces them with warp shuffles.
// Shared memory: one float per warp (32 floats, the largest block), and one flag.
// Launch: a grid sized to the GPU (as many blocks as it holds at once) × a power-of-two block of 32 to 1024 threads; partial has one float per block; *count starts at 0 and is 0 again after every launch.

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
extern "C" __global__ void dot_one_launch(const float *a, const float *b, unsigned int n, float *partial,
                                          unsigned int *count, float *c)
{
    __shared__ float warp_sums[32];
    __shared__ bool is_last;
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
    // ANCHOR: last_block
    if (tid == 0) {
        partial[blockIdx.x] = sum;
        // Publish the sum before taking a ticket: whoever draws the last ticket sees it.
        __threadfence();
        // atomicInc wraps to 0 after gridDim.x - 1, so the counter is ready for the next launch.
        unsigned int ticket = atomicInc(count, gridDim.x - 1);
        // A fence after the ticket too: the sums published before the earlier tickets are then
        // visible to this thread, and the barrier below passes them on to the whole block.
        __threadfence();
        is_last = ticket == gridDim.x - 1;
    }
    __syncthreads();
    if (is_last) {
        float total = 0.0f;
        for (unsigned int i = tid; i < gridDim.x; i += blockDim.x) {
            total += partial[i];
        }
        total = block_sum(total, warp_sums);
        if (tid == 0) {
            *c = total;
        }
    }
    // ANCHOR_END: last_block
}
// ANCHOR_END: kernel
