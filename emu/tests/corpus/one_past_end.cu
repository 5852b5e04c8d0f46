// BROKEN(out of bounds): `<=` reads one element past the end of in — fixed by `i < n`
// Thread mapping: one element per thread.
// Shared memory: none.
// Launch: n + 1 threads or more; out has n + 1 elements, in has n.

extern "C" __global__ void one_past_end(const int *in, int *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i <= n) {
        out[i] = in[i] * 2; // BUG: in[n] is past the end
    }
}
