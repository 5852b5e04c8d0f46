// FIXED: a non-inlined device function with a return value, and a per-thread local array.
// Thread mapping: one element per thread.
// Shared memory: none.
// Launch: any; out[i] = sum over k < 8 of (in[i] + k) * (k & 1 ? -1 : 1), then clamp(.., -100, 100) * 1.5.

__device__ __noinline__ float scale_clamp(float v, float lo, float hi)
{
    return fminf(fmaxf(v, lo), hi) * 1.5f;
}

__device__ __noinline__ double twice(double d)
{
    return d * 2.0;
}

extern "C" __global__ void calls_and_local(const int *in, float *out, double *dout, int n, int pick)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) {
        return;
    }
    int scratch[8];
    for (int k = 0; k < 8; ++k) {
        scratch[k] = (in[i] + k) * ((k & 1) ? -1 : 1);
    }
    int acc = 0;
    for (int k = 0; k < 8; ++k) {
        acc += scratch[(k + pick) & 7];
    }
    out[i] = scale_clamp((float)acc, -100.0f, 100.0f);
    dout[i] = twice((double)in[i]);
}
