// BROKEN(stack overflow): the recursion has no base case, so it never stops.
// Thread mapping: one thread per element of out.
// Shared memory: none.
// Launch: any.

__device__ __noinline__ int depth(volatile int *seen, int d)
{
    int below = depth(seen, d + 1); // BUG: no base case, every call recurses
    seen[0] = below;
    return below + 1;
}

extern "C" __global__ void recursion_unbounded(int *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        out[i] = depth(out + i, 0);
    }
}
