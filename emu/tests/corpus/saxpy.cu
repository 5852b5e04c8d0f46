// FIXED: y = a·x + y, one element per thread.
// Thread mapping: thread i of the grid owns x[i] and y[i].
// Shared memory: none.
// Launch: any 1D grid × block covering n (e.g. 65535 × 1024); x and y have n floats.

extern "C" __global__ void saxpy(float a, const float *x, float *y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        y[i] = a * x[i] + y[i];
    }
}
