// BROKEN(out of bounds): no bounds guard: the last block's spare threads read and write past n — fixed in 02_scalar_multiply.cu
// Thread mapping: as in 02_scalar_multiply.cu, without the if (i < n).
// Shared memory: none.
// Launch: ceil(n / blockDim.x) blocks; in bounds only when blockDim.x divides n.

// ANCHOR: kernel
extern "C" __global__ void scalar_multiply_no_guard(const float *x, float a, float *y, unsigned int n)
{
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    y[i] = a * x[i]; // BUG: no if (i < n): threads with i >= n read x[i] and write y[i] past the end
}
// ANCHOR_END: kernel
