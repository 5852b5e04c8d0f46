"""A histogram privatized in shared memory: each block counts into its own bins, then adds
them to the global histogram once.

Expect: correct
"""
import numpy as np
from numba import int32
from racetrack import cuda

BINS = 32


@cuda.jit
def histogram(data, hist):
    local_hist = cuda.shared.array(BINS, int32)
    t = cuda.threadIdx.x
    if t < BINS:
        local_hist[t] = 0
    cuda.syncthreads()

    for i in range(cuda.grid(1), data.shape[0], cuda.gridsize(1)):
        cuda.atomic.add(local_hist, data[i], 1)
    cuda.syncthreads()

    if t < BINS:
        cuda.atomic.add(hist, t, local_hist[t])


rng = np.random.default_rng(1)
data = rng.integers(0, BINS, 10000).astype(np.int32)
hist = np.zeros(BINS, dtype=np.int32)
histogram[4, 128](data, hist)
print(hist)
assert np.array_equal(hist, np.bincount(data, minlength=BINS))
