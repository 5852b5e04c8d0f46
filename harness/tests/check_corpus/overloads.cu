// FIXED: two kernels that share a name, as C++ allows: `--entry fill` is ambiguous, and
// `--entry 'fill(int*, int, int)'` picks one by its parameter types.
// Thread mapping: one element per thread.
// Shared memory: none.
// Launch: at least n threads.
__global__ void fill(float *x, float value, int n)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        x[i] = value;
    }
}

__global__ void fill(int *x, int value, int n)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        x[i] = value + i;
    }
}
