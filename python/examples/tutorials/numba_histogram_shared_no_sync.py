"""The shared-memory histogram without the barrier before the merge: a block adds its bins to
the global histogram while its other warps are still counting.

Expect: RaceError at the # BUG line.
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
    # (the missing cuda.syncthreads() goes here)

    if t < BINS:
        cuda.atomic.add(hist, t, local_hist[t])  # BUG: reads bins other warps still add to


rng = np.random.default_rng(1)
data = rng.integers(0, BINS, 10000).astype(np.int32)
hist = np.zeros(BINS, dtype=np.int32)
histogram[4, 128](data, hist)
print(hist.sum(), "of", data.size)
