"""Doubling a 4x4 matrix with explicit allocation and copies, as PyCUDA's tutorial does it.

Expect: correct
"""
import numpy as np
import racetrack.pycuda.autoinit  # noqa: F401
import racetrack.pycuda.driver as cuda
from racetrack.pycuda.compiler import SourceModule

a = np.random.default_rng(11).standard_normal((4, 4)).astype(np.float32)
a_gpu = cuda.mem_alloc(a.nbytes)
cuda.memcpy_htod(a_gpu, a)

mod = SourceModule("""
  __global__ void doublify(float *a)
  {
    int idx = threadIdx.x + threadIdx.y*4;
    a[idx] *= 2;
  }
  """)

func = mod.get_function("doublify")
func(a_gpu, block=(4, 4, 1))

a_doubled = np.empty_like(a)
cuda.memcpy_dtoh(a_doubled, a_gpu)
print(a_doubled)
assert np.allclose(a_doubled, 2 * a)
