"""A barrier inside a branch that only some threads take: the others never arrive.

Expect: SyncError at the # BUG line.
"""
import numpy as np
from numba import float32
from racetrack import cuda

TPB = 128


@cuda.jit
def block_sum(x, partial):
    shared = cuda.shared.array(TPB, float32)
    t = cuda.threadIdx.x
    shared[t] = x[cuda.grid(1)]
    cuda.syncthreads()
    stride = TPB // 2
    while stride > 0:
        if t < stride:
            shared[t] += shared[t + stride]
            cuda.syncthreads()  # BUG: only threads with t < stride reach this barrier
        stride //= 2
    if t == 0:
        partial[cuda.blockIdx.x] = shared[0]


x = np.ones(4 * TPB, dtype=np.float32)
partial = np.zeros(4, dtype=np.float32)
block_sum[4, TPB](x, partial)
print(partial)
