// BROKEN(uninitialized): out[i] += x[i] reads out, which nothing initialized when the host allocated it uninitialized — fixed by out[i] = x[i]
// Thread mapping: one element per thread.
// Shared memory: none.
// Launch: any grid × block covering n; x and out have n floats.

extern "C" __global__ void accumulate_into_output(const float *x, float *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        out[i] += x[i]; // BUG: reads out[i] before anything wrote it
    }
}
