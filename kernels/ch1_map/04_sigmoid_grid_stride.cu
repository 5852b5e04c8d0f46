// FIXED: y = 1 / (1 + e^-x), the logistic sigmoid, with a grid-stride loop.
// Thread mapping: thread t of the grid handles elements t, t + stride, t + 2 * stride, ...
//                 where stride = blockDim.x * gridDim.x, the number of threads in the grid.
// Shared memory: none.
// Launch: any grid × block; the grid need not cover n.

// ANCHOR: kernel
extern "C" __global__ void sigmoid_grid_stride(const float *x, float *y, unsigned int n)
{
    unsigned int stride = blockDim.x * gridDim.x;
    for (unsigned int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        y[i] = 1.0f / (1.0f + expf(-x[i]));
    }
}
// ANCHOR_END: kernel
