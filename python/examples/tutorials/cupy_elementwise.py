"""CuPy's ElementwiseKernel: the squared difference of two arrays, broadcast over a row.

Expect: correct
"""
import numpy as np
import racetrack.cupy as cp

squared_diff = cp.ElementwiseKernel(
    'float32 x, float32 y',
    'float32 z',
    'z = (x - y) * (x - y)',
    'squared_diff')

x = cp.arange(10, dtype=np.float32).reshape(2, 5)
y = cp.arange(5, dtype=np.float32)
z = squared_diff(x, y)
print(z)
assert np.allclose(cp.asnumpy(z), (np.arange(10).reshape(2, 5) - np.arange(5)) ** 2)
