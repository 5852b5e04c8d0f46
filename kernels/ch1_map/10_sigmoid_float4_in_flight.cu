// FIXED: the float4 sigmoid with four independent 16-byte loads in flight per thread before any is used.
// Thread mapping: in each pass thread t loads float4s t, t + stride, t + 2 * stride, t + 3 * stride, then
//                 computes and stores them; passes step by 4 * stride (stride = blockDim.x * gridDim.x).
//                 The last n % 4 elements go one each to the first threads.
// Shared memory: none.
// Launch: any grid × block (here as many blocks as the GPU holds at once); x and y 16-byte aligned
//         (every allocation is).

#define IN_FLIGHT 4

__device__ float sigmoid(float v)
{
    return 1.0f / (1.0f + expf(-v));
}

// ANCHOR: kernel
extern "C" __global__ void sigmoid_float4_in_flight(const float *x, float *y, unsigned int n)
{
    // 64-bit: first + 3 * stride can pass 2^32 on a large grid.
    unsigned long long stride = blockDim.x * gridDim.x;
    unsigned long long quads = n / 4;
    const float4 *x4 = reinterpret_cast<const float4 *>(x);
    float4 *y4 = reinterpret_cast<float4 *>(y);
    for (unsigned long long base = blockIdx.x * blockDim.x + threadIdx.x; base < quads;
         base += IN_FLIGHT * stride) {
        float4 v[IN_FLIGHT];
#pragma unroll
        for (int k = 0; k < IN_FLIGHT; ++k) {
            if (base + k * stride < quads) {
                v[k] = x4[base + k * stride];
            }
        }
#pragma unroll
        for (int k = 0; k < IN_FLIGHT; ++k) {
            if (base + k * stride < quads) {
                y4[base + k * stride] =
                    make_float4(sigmoid(v[k].x), sigmoid(v[k].y), sigmoid(v[k].z), sigmoid(v[k].w));
            }
        }
    }
    for (unsigned long long i = 4 * quads + blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += stride) {
        y[i] = sigmoid(x[i]);
    }
}
// ANCHOR_END: kernel
