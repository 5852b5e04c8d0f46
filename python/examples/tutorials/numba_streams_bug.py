"""The streams bug: the input is copied on one stream and the kernel is launched on another,
with nothing between them. On a GPU the kernel may start before the copy has finished.

Expect: RaceError at the # BUG lines (the copy's and the launch's).
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

d_data = cuda.to_device(data, stream=copy_stream)  # BUG: copied on copy_stream ...
scale[n // 128, 128, compute_stream](d_data, 2.0)  # BUG: ... read on compute_stream, no event
result = d_data.copy_to_host(stream=compute_stream)
compute_stream.synchronize()
print(result[:4])
