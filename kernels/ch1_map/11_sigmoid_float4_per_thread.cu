// FIXED: one float4 per thread and no loop: a grid that covers the array, so the blocks in flight read one contiguous stretch of it.
// Thread mapping: thread i = blockIdx.x * blockDim.x + threadIdx.x handles elements 4i .. 4i + 3; the thread
//                 whose four would run past n (i = n / 4) handles the last n % 4 elements one by one.
// Shared memory: none.
// Launch: ⌈n / 4⌉ threads or more, in blocks of any size; x and y 16-byte aligned (every allocation is).

__device__ float sigmoid(float v)
{
    return 1.0f / (1.0f + expf(-v));
}

// ANCHOR: kernel
extern "C" __global__ void sigmoid_float4_per_thread(const float *x, float *y, unsigned int n)
{
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned int quads = n / 4;
    if (i < quads) {
        float4 v = reinterpret_cast<const float4 *>(x)[i];
        reinterpret_cast<float4 *>(y)[i] =
            make_float4(sigmoid(v.x), sigmoid(v.y), sigmoid(v.z), sigmoid(v.w));
    } else if (i == quads) {
        for (unsigned int j = 4 * quads; j < n; ++j) {
            y[j] = sigmoid(x[j]);
        }
    }
}
// ANCHOR_END: kernel
