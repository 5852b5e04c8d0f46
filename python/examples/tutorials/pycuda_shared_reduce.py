"""A block sum in shared memory with SourceModule: each block writes its partial sum, the host
adds them.

Expect: correct
Float32 sums: at most 2000 terms (2000 values).
"""
import numpy as np
import racetrack.pycuda.autoinit  # noqa: F401
import racetrack.pycuda.driver as drv
from racetrack.pycuda.compiler import SourceModule

mod = SourceModule("""
#define THREADS 128
__global__ void block_sum(const float *x, float *partial, int n)
{
    __shared__ float cache[THREADS];
    int t = threadIdx.x;
    int i = blockIdx.x * blockDim.x + t;
    cache[t] = i < n ? x[i] : 0.0f;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (t < s)
            cache[t] += cache[t + s];
        __syncthreads();
    }
    if (t == 0)
        partial[blockIdx.x] = cache[0];
}
""")
block_sum = mod.get_function("block_sum")

n = 2000
x = np.random.default_rng(14).random(n).astype(np.float32)
blocks = (n + 127) // 128
partial = np.zeros(blocks, dtype=np.float32)
block_sum(drv.In(x), drv.Out(partial), np.int32(n), block=(128, 1, 1), grid=(blocks, 1))
print(partial.sum(), x.sum())
assert abs(partial.sum() - x.astype(np.float64).sum()) <= 1e-3
