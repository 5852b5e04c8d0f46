"""The dot product without the barrier inside the tree: a thread adds a partial sum its
neighbour has not finished writing.

Expect: RaceError at the # BUG line.
"""
import numpy as np
from numba import float32
from racetrack import cuda

THREADS = 128


@cuda.jit
def dot(a, b, result):
    cache = cuda.shared.array(THREADS, float32)
    t = cuda.threadIdx.x
    temp = float32(0.0)
    for i in range(cuda.grid(1), a.shape[0], cuda.gridsize(1)):
        temp += a[i] * b[i]
    cache[t] = temp
    cuda.syncthreads()

    half = cuda.blockDim.x // 2
    while half > 0:
        if t < half:
            cache[t] += cache[t + half]  # BUG: no syncthreads between the tree's steps
        half //= 2

    if t == 0:
        cuda.atomic.add(result, 0, cache[0])


n = 4000
rng = np.random.default_rng(2)
a = rng.random(n).astype(np.float32)
b = rng.random(n).astype(np.float32)
result = np.zeros(1, dtype=np.float32)
dot[8, THREADS](a, b, result)
print(result[0], np.dot(a, b))
