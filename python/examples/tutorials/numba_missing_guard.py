"""Adding two vectors without the bounds check: the last block runs past the end.

Expect: MemoryAccessError at the # BUG line.
"""
import numpy as np
from racetrack import cuda


@cuda.jit
def add_arrays(a, b, out):
    i = cuda.grid(1)
    out[i] = a[i] + b[i]  # BUG: no `if i < out.size`


n = 1000
a = np.ones(n, dtype=np.float32)
b = np.ones(n, dtype=np.float32)
out = np.zeros(n, dtype=np.float32)

threads_per_block = 128
blocks_per_grid = (n + threads_per_block - 1) // threads_per_block
add_arrays[blocks_per_grid, threads_per_block](a, b, out)
print(out[:5])
