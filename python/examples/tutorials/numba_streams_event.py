"""The streams bug fixed: the copy stream records an event after the copy, and the compute
stream waits for it before the kernel.

Expect: correct
"""
import numpy as np
from racetrack import cuda


@cuda.jit
def scale(x, factor):
    i = cuda.grid(1)
    if i < x.size:
        x[i] *= factor


n = 1024
data = np.arange(n, dtype=np.float32)
copy_stream = cuda.stream()
compute_stream = cuda.stream()

d_data = cuda.to_device(data, stream=copy_stream)
copied = cuda.event()
copied.record(copy_stream)
copied.wait(compute_stream)
scale[n // 128, 128, compute_stream](d_data, 2.0)
result = d_data.copy_to_host(stream=compute_stream)
compute_stream.synchronize()
print(result[:4])
assert np.allclose(result, 2.0 * data)
