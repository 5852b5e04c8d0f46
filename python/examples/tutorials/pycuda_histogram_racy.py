"""A histogram in CUDA C without atomics: `hist[bin]++` from many threads loses counts.

Expect: RaceError at the # BUG line.
"""
import numpy as np
import racetrack.pycuda.autoinit  # noqa: F401
import racetrack.pycuda.driver as drv
from racetrack.pycuda.compiler import SourceModule

mod = SourceModule("""
__global__ void histogram(const int *data, int *hist, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        hist[data[i]]++;  // BUG: not atomicAdd
}
""")
histogram = mod.get_function("histogram")

data = np.random.default_rng(15).integers(0, 8, 2048).astype(np.int32)
hist = np.zeros(8, dtype=np.int32)
histogram(drv.In(data), drv.InOut(hist), np.int32(data.size), block=(256, 1, 1), grid=(8, 1))
print(hist, hist.sum(), "of", data.size)
