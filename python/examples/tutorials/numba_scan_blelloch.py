"""A work-efficient exclusive scan (Blelloch) in one block: an up-sweep builds partial sums in
a tree, the root is cleared, and a down-sweep passes the prefixes back down.

Expect: correct
"""
import numpy as np
from numba import int32
from racetrack import cuda

N = 512  # elements; one thread per pair


@cuda.jit
def blelloch_scan(x, out):
    temp = cuda.shared.array(N, int32)
    t = cuda.threadIdx.x
    temp[2 * t] = x[2 * t]
    temp[2 * t + 1] = x[2 * t + 1]

    offset = 1
    d = N // 2
    while d > 0:
        cuda.syncthreads()
        if t < d:
            ai = offset * (2 * t + 1) - 1
            bi = offset * (2 * t + 2) - 1
            temp[bi] += temp[ai]
        offset *= 2
        d //= 2

    if t == 0:
        temp[N - 1] = 0

    d = 1
    while d < N:
        offset //= 2
        cuda.syncthreads()
        if t < d:
            ai = offset * (2 * t + 1) - 1
            bi = offset * (2 * t + 2) - 1
            saved = temp[ai]
            temp[ai] = temp[bi]
            temp[bi] += saved
        d *= 2
    cuda.syncthreads()

    out[2 * t] = temp[2 * t]
    out[2 * t + 1] = temp[2 * t + 1]


x = np.random.default_rng(8).integers(0, 10, N).astype(np.int32)
out = np.zeros(N, dtype=np.int32)
blelloch_scan[1, N // 2](x, out)
expected = np.concatenate(([0], np.cumsum(x)[:-1])).astype(np.int32)
print(out[:8])
assert np.array_equal(out, expected)
