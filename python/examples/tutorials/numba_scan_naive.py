"""An inclusive scan (Hillis and Steele) in one block, double-buffered in shared memory: each
step reads one buffer and writes the other.

Expect: correct
"""
import numpy as np
from numba import int32
from racetrack import cuda

N = 256


@cuda.jit
def scan(x, out):
    temp = cuda.shared.array((2, N), int32)
    t = cuda.threadIdx.x
    temp[0, t] = x[t]
    cuda.syncthreads()
    src = 0
    offset = 1
    while offset < N:
        dst = 1 - src
        if t >= offset:
            temp[dst, t] = temp[src, t] + temp[src, t - offset]
        else:
            temp[dst, t] = temp[src, t]
        cuda.syncthreads()
        src = dst
        offset *= 2
    out[t] = temp[src, t]


x = np.random.default_rng(7).integers(-50, 50, N).astype(np.int32)
out = np.zeros(N, dtype=np.int32)
scan[1, N](x, out)
print(out[:8])
assert np.array_equal(out, np.cumsum(x))
