"""A block sum as a RawKernel without the barrier inside the tree.

Expect: RaceError at the # BUG line.
"""
import numpy as np
import racetrack.cupy as cp

block_sum = cp.RawKernel(r'''
extern "C" __global__
void block_sum(const float *x, float *partial) {
    __shared__ float cache[128];
    int t = threadIdx.x;
    cache[t] = x[blockIdx.x * blockDim.x + t];
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (t < s)
            cache[t] += cache[t + s];  // BUG: no __syncthreads() between the steps
    }
    if (t == 0)
        partial[blockIdx.x] = cache[0];
}
''', 'block_sum')

x = cp.ones(512, dtype=cp.float32)
partial = cp.zeros(4, dtype=cp.float32)
block_sum((4,), (128,), (x, partial))
print(partial.get())
