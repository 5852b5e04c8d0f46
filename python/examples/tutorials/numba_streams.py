"""Overlapping copies and kernels: the data goes in chunks, each chunk's copy in, kernel and
copy out queued on one stream of its own, so a chunk's work is ordered by its stream.

Expect: correct
"""
import numpy as np
from racetrack import cuda


@cuda.jit
def scale(x, factor):
    i = cuda.grid(1)
    if i < x.size:
        x[i] *= factor


n_streams = 4
chunk = 512
data = np.arange(n_streams * chunk, dtype=np.float32)
result = np.empty_like(data)

streams = [cuda.stream() for _ in range(n_streams)]
for k, stream in enumerate(streams):
    part = slice(k * chunk, (k + 1) * chunk)
    d_part = cuda.to_device(data[part], stream=stream)
    scale[(chunk + 127) // 128, 128, stream](d_part, 3.0)
    d_part.copy_to_host(result[part], stream=stream)
for stream in streams:
    stream.synchronize()

print(result[:4], result[-4:])
assert np.allclose(result, 3.0 * data)
