// FIXED: a recursive device function with a local array in every call.
// Thread mapping: one thread per element of out.
// Shared memory: none.
// Launch: any; out[i] = fib(i % 16) + (i % 16) * 3.

__device__ int fib_with_local(int n)
{
    if (n < 2) {
        return n;
    }
    volatile int local[3] = {n, n * 2, n * 3};
    int sum = fib_with_local(n - 1) + fib_with_local(n - 2);
    return sum + local[2] - local[0] - local[1];
}

extern "C" __global__ void recursion_fib(int *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        out[i] = fib_with_local(i % 16) + (i % 16) * 3;
    }
}
