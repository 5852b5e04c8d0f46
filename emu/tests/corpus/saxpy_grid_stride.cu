// FIXED: y = a·x + y with a grid-stride loop, so any grid covers any n.
// Thread mapping: thread t of the grid owns elements t, t + gridDim.x·blockDim.x, …
// Shared memory: none.
// Launch: any 1D grid × block (e.g. 2560 × 256); x and y have n floats.

extern "C" __global__ void saxpy_grid_stride(float a, const float *x, float *y, unsigned int n)
{
    unsigned int stride = blockDim.x * gridDim.x;
    for (unsigned int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        y[i] = a * x[i] + y[i];
    }
}
