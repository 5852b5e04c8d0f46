// FIXED: the grid-stride sigmoid on float4: one 16-byte load and one 16-byte store per four elements.
// Thread mapping: thread t of the grid handles float4 t, t + stride, ... (elements 4t .. 4t + 3, ...),
//                 stride = blockDim.x * gridDim.x; the last n % 4 elements go one each to the first threads.
// Shared memory: none.
// Launch: any grid × block; x and y 16-byte aligned (every allocation is).

__device__ float sigmoid(float v)
{
    return 1.0f / (1.0f + expf(-v));
}

// ANCHOR: kernel
extern "C" __global__ void sigmoid_float4(const float *x, float *y, unsigned int n)
{
    unsigned int stride = blockDim.x * gridDim.x;
    unsigned int first = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned int quads = n / 4;
    const float4 *x4 = reinterpret_cast<const float4 *>(x);
    float4 *y4 = reinterpret_cast<float4 *>(y);
    for (unsigned int i = first; i < quads; i += stride) {
        float4 v = x4[i];
        y4[i] = make_float4(sigmoid(v.x), sigmoid(v.y), sigmoid(v.z), sigmoid(v.w));
    }
    for (unsigned int i = 4 * quads + first; i < n; i += stride) {
        y[i] = sigmoid(x[i]);
    }
}
// ANCHOR_END: kernel
