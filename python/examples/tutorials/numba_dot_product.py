"""A dot product: each thread multiplies pairs in a grid-stride loop, a block sums its
products in shared memory with a tree, and every block adds its sum to the result with one
atomic.

Expect: correct
Float32 sums: at most 4000 terms (4000 products).
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
            cache[t] += cache[t + half]
        cuda.syncthreads()
        half //= 2

    if t == 0:
        cuda.atomic.add(result, 0, cache[0])


n = 4000
rng = np.random.default_rng(2)
a = rng.random(n).astype(np.float32)
b = rng.random(n).astype(np.float32)
result = np.zeros(1, dtype=np.float32)
dot[8, THREADS](a, b, result)
expected = np.dot(a.astype(np.float64), b.astype(np.float64))
print(result[0], expected)
assert abs(result[0] - expected) <= 1e-4 * expected
