// BROKEN(out of bounds): `<=` reads one element past the end — fixed by `i < n`
// Thread mapping: one element per thread.
// Shared memory: none.
// Launch: n + 1 threads or more.

extern "C" __global__ void one_past_end(const int *in, int *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i <= n) {
        int v = in[i]; // BUG: in[n] is past the end
        if (i < n) {
            out[i] = v * 2;
        }
    }
}
