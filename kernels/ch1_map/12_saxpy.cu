// FIXED: saxpy, y = a · x + y, one thread per element: NVRTC contracts the multiply and the add into one fma, rounded once.
// Thread mapping: thread i = blockIdx.x * blockDim.x + threadIdx.x updates y[i]; threads past n do nothing.
// Shared memory: none.
// Launch: ceil(n / blockDim.x) blocks of any size.

// ANCHOR: kernel
extern "C" __global__ void saxpy(float a, const float *x, float *y, unsigned int n)
{
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        y[i] = a * x[i] + y[i];
    }
}
// ANCHOR_END: kernel
