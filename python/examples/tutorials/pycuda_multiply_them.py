"""PyCUDA's first example: multiply two arrays element by element, In/Out around NumPy arrays.

Expect: correct
"""
import numpy as np
import racetrack.pycuda.autoinit  # noqa: F401
import racetrack.pycuda.driver as drv
from racetrack.pycuda.compiler import SourceModule

mod = SourceModule("""
__global__ void multiply_them(float *dest, float *a, float *b)
{
  const int i = threadIdx.x;
  dest[i] = a[i] * b[i];
}
""")

multiply_them = mod.get_function("multiply_them")

a = np.random.default_rng(9).standard_normal(400).astype(np.float32)
b = np.random.default_rng(10).standard_normal(400).astype(np.float32)

dest = np.zeros_like(a)
multiply_them(drv.Out(dest), drv.In(a), drv.In(b), block=(400, 1, 1), grid=(1, 1))

print(dest[:4])
assert np.allclose(dest, a * b)
