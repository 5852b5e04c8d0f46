"""A naive parallel prefix sum (Hillis and Steele) with one launch per step and two buffers,
then the total read from the last element, as PyCUDA tutorials do.

Expect: correct
"""
import numpy as np
import racetrack.pycuda.autoinit  # noqa: F401
import racetrack.pycuda.gpuarray as gpuarray
from racetrack.pycuda.compiler import SourceModule

mod = SourceModule("""
__global__ void scan_step(const int *in, int *out, int offset, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = i >= offset ? in[i] + in[i - offset] : in[i];
}
""")
scan_step = mod.get_function("scan_step")

n = 1000
x = np.random.default_rng(18).integers(0, 10, n).astype(np.int32)
in_gpu = gpuarray.to_gpu(x)
out_gpu = gpuarray.empty_like(in_gpu)
offset = 1
while offset < n:
    scan_step(in_gpu, out_gpu, np.int32(offset), np.int32(n), block=(256, 1, 1), grid=((n + 255) // 256, 1))
    in_gpu, out_gpu = out_gpu, in_gpu
    offset *= 2

total = in_gpu[-1].get()
print("total:", total)
assert total == x.sum()
assert np.array_equal(in_gpu.get(), np.cumsum(x))
