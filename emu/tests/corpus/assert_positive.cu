// BROKEN(assert): the input has a negative value, so assert() stops the kernel on a GPU.
// Thread mapping: one thread per element.
// Shared memory: none.
// Launch: any; n elements of in, n of out.

extern "C" __global__ void assert_positive(const int *in, int *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        assert(in[i] >= 0); // BUG: fails for the negative inputs
        out[i] = in[i] * 2;
    }
}
