"""A linear combination with ElementwiseKernel: z = a*x + b*y, the loop written for you.

Expect: correct
"""
import numpy as np
import racetrack.pycuda.autoinit  # noqa: F401
import racetrack.pycuda.gpuarray as gpuarray
from racetrack.pycuda.elementwise import ElementwiseKernel

rng = np.random.default_rng(12)
a_gpu = gpuarray.to_gpu(rng.standard_normal(500).astype(np.float32))
b_gpu = gpuarray.to_gpu(rng.standard_normal(500).astype(np.float32))

lin_comb = ElementwiseKernel(
    "float a, float *x, float b, float *y, float *z",
    "z[i] = a*x[i] + b*y[i]",
    "linear_combination")

c_gpu = gpuarray.empty_like(a_gpu)
lin_comb(5, a_gpu, 6, b_gpu, c_gpu)

print(c_gpu.get()[:4])
assert np.allclose(c_gpu.get(), 5 * a_gpu.get() + 6 * b_gpu.get(), atol=1e-5)
