// FIXED: the grid-stride sigmoid with __expf, the hardware's fast approximation, in place of expf.
// Thread mapping: thread t of the grid handles elements t, t + stride, t + 2 * stride, ...
//                 where stride = blockDim.x * gridDim.x, the number of threads in the grid.
// Shared memory: none.
// Launch: any grid × block; the grid need not cover n.

// ANCHOR: kernel
extern "C" __global__ void sigmoid_fast_exp(const float *x, float *y, unsigned int n)
{
    unsigned int stride = blockDim.x * gridDim.x;
    for (unsigned int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        y[i] = 1.0f / (1.0f + __expf(-x[i]));
    }
}
// ANCHOR_END: kernel
