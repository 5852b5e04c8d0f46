"""CuPy's RawKernel: element-wise addition written in CUDA C, launched on CuPy arrays.

Expect: correct
"""
import numpy as np
import racetrack.cupy as cp

add_kernel = cp.RawKernel(r'''
extern "C" __global__
void my_add(const float* x1, const float* x2, float* y, int n) {
    int tid = blockDim.x * blockIdx.x + threadIdx.x;
    if (tid < n)
        y[tid] = x1[tid] + x2[tid];
}
''', 'my_add')

n = 1000
x1 = cp.arange(n, dtype=cp.float32)
x2 = cp.ones(n, dtype=cp.float32)
y = cp.zeros(n, dtype=cp.float32)
add_kernel(((n + 127) // 128,), (128,), (x1, x2, y, np.int32(n)))
result = cp.asnumpy(y)
print(result[:4])
assert np.allclose(result, np.arange(n) + 1)
