// FIXED: y = a · x, one thread per element.
// Thread mapping: thread i = blockIdx.x * blockDim.x + threadIdx.x computes y[i]; threads past n do nothing.
// Shared memory: none.
// Launch: ceil(n / blockDim.x) blocks of any size.

// ANCHOR: kernel
extern "C" __global__ void scalar_multiply(const float *x, float a, float *y, unsigned int n)
{
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        y[i] = a * x[i];
    }
}
// ANCHOR_END: kernel
