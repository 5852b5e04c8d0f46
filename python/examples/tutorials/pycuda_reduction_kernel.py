"""A dot product with ReductionKernel: map each pair to a product, reduce with +.

Expect: correct
Float32 sums: at most 1000 terms (1000 products).
"""
import numpy as np
import racetrack.pycuda.autoinit  # noqa: F401
import racetrack.pycuda.gpuarray as gpuarray
from racetrack.pycuda.reduction import ReductionKernel

rng = np.random.default_rng(13)
x = gpuarray.to_gpu(rng.random(1000).astype(np.float32))
y = gpuarray.to_gpu(rng.random(1000).astype(np.float32))

dot = ReductionKernel(np.float32, neutral="0",
                      reduce_expr="a+b", map_expr="x[i]*y[i]",
                      arguments="float *x, float *y")

result = dot(x, y).get()
expected = np.dot(x.get().astype(np.float64), y.get().astype(np.float64))
print(result, expected)
assert abs(result - expected) <= 1e-4 * expected
