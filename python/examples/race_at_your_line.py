"""Five minutes to a race at your .py line: a block-sum kernel missing one barrier.

    python race_at_your_line.py

On a real GPU, change the import line to `from numba import cuda`; nothing else.
"""

import numpy as np
from numba import float32

# ANCHOR: import
from racetrack import cuda  # on a GPU: from numba import cuda
# ANCHOR_END: import

# ANCHOR: kernel
THREADS = 64


@cuda.jit
def block_sum(x, out):
    cache = cuda.shared.array(THREADS, float32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    cache[t] = x[i] if i < x.size else 0.0
    cuda.syncthreads()
    step = THREADS // 2
    while step > 0:
        if t < step:
            cache[t] += cache[t + step]  # BUG: no cuda.syncthreads() after each step
        step //= 2
    if t == 0:
        out[cuda.blockIdx.x] = cache[0]


x = np.ones(256, dtype=np.float32)
out = np.zeros(4, dtype=np.float32)
block_sum[4, THREADS](x, out)
print("block sums:", out)
# ANCHOR_END: kernel
