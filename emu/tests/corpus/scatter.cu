// FIXED: out[index[i]] = x[i]; index is a permutation, so every element of out is written once.
// Thread mapping: one element of x per thread; the writes land anywhere in out.
// Shared memory: none.
// Launch: any 1D grid × block covering n; x, index and out have n elements.

extern "C" __global__ void scatter(const float *x, const int *index, float *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        out[index[i]] = x[i];
    }
}
