"""The streams bug in PyCUDA: memcpy_htod_async on one stream, the kernel on another, no event.

Expect: RaceError at the # BUG lines (the copy's and the launch's).
"""
import numpy as np
import racetrack.pycuda.autoinit  # noqa: F401
import racetrack.pycuda.driver as drv
from racetrack.pycuda.compiler import SourceModule

mod = SourceModule("""
__global__ void scale(float *x, float factor, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        x[i] *= factor;
}
""")
scale = mod.get_function("scale")

n = 1024
host = drv.pagelocked_empty(n, np.float32)
host[:] = np.arange(n, dtype=np.float32)
x_gpu = drv.mem_alloc(host.nbytes)

copy_stream = drv.Stream()
compute_stream = drv.Stream()
drv.memcpy_htod_async(x_gpu, host, copy_stream)  # BUG: copied on copy_stream, then
scale(x_gpu, np.float32(2), np.int32(n), block=(128, 1, 1), grid=(8, 1), stream=compute_stream)  # BUG: no event
drv.memcpy_dtoh_async(host, x_gpu, compute_stream)
compute_stream.synchronize()
print(host[:4])
