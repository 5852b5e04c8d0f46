"""Adding two vectors: one thread per element, a guard for the last block.

Expect: correct
"""
import numpy as np
from racetrack import cuda


@cuda.jit
def add_arrays(a, b, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = a[i] + b[i]


n = 1000
a = np.arange(n, dtype=np.float32)
b = 2 * np.arange(n, dtype=np.float32)

d_a = cuda.to_device(a)
d_b = cuda.to_device(b)
d_out = cuda.device_array_like(a)

threads_per_block = 128
blocks_per_grid = (n + threads_per_block - 1) // threads_per_block
add_arrays[blocks_per_grid, threads_per_block](d_a, d_b, d_out)
out = d_out.copy_to_host()

print(out[:5])
assert np.allclose(out, a + b)
