"""A dot product as a RawKernel: a shared-memory tree per block, one atomicAdd per block.

Expect: correct
Float32 sums: at most 5000 terms (5000 products).
"""
import numpy as np
import racetrack.cupy as cp

dot_kernel = cp.RawKernel(r'''
extern "C" __global__
void dot(const float *a, const float *b, float *result, int n) {
    __shared__ float cache[256];
    int t = threadIdx.x;
    float sum = 0.0f;
    for (int i = blockIdx.x * blockDim.x + t; i < n; i += blockDim.x * gridDim.x)
        sum += a[i] * b[i];
    cache[t] = sum;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (t < s)
            cache[t] += cache[t + s];
        __syncthreads();
    }
    if (t == 0)
        atomicAdd(result, cache[0]);
}
''', 'dot')

n = 5000
rng = np.random.default_rng(16)
a_host = rng.random(n).astype(np.float32)
b_host = rng.random(n).astype(np.float32)
a = cp.asarray(a_host)
b = cp.asarray(b_host)
result = cp.zeros(1, dtype=cp.float32)
dot_kernel((8,), (256,), (a, b, result, np.int32(n)))
expected = np.dot(a_host.astype(np.float64), b_host.astype(np.float64))
print(float(result.get()[0]), expected)
assert abs(result.get()[0] - expected) <= 1e-4 * expected
