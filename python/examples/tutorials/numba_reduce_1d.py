"""A block-wise sum: each block reduces its slice in shared memory and writes one partial sum;
the host adds the partial sums.

Expect: correct
Float32 sums: at most 3000 terms (3000 values; the host's sum of the partial sums too).
"""
import numpy as np
from numba import float32
from racetrack import cuda

TPB = 256


@cuda.jit
def block_sum(x, partial):
    shared = cuda.shared.array(TPB, float32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    shared[t] = x[i] if i < x.shape[0] else 0
    cuda.syncthreads()

    stride = TPB // 2
    while stride > 0:
        if t < stride:
            shared[t] += shared[t + stride]
        cuda.syncthreads()
        stride //= 2

    if t == 0:
        partial[cuda.blockIdx.x] = shared[0]


n = 3000
x = np.random.default_rng(3).random(n).astype(np.float32)
blocks = (n + TPB - 1) // TPB
partial = np.zeros(blocks, dtype=np.float32)
block_sum[blocks, TPB](x, partial)
total = partial.sum()
print(total, x.sum())
assert abs(total - x.astype(np.float64).sum()) <= 1e-3
