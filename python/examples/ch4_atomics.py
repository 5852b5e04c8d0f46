"""Chapter 4, atomics: data races, atomic adds, histograms, privatization in shared memory.

Fixed: an atomic counter; a histogram with global atomics; a shared-memory histogram merged
after a barrier.
Broken: `x[0] = x[0] + 1` from every thread (race, lost updates); the histogram without
atomics (race); the shared histogram merged without the barrier before the merge (race).
"""

import numpy as np
from numba import int32

from racetrack import cuda

THREADS = 128
BINS = 16


# ANCHOR: atomic
@cuda.jit
def atomic_increment(x):
    cuda.atomic.add(x, 0, 1)
# ANCHOR_END: atomic


# ANCHOR: racy
@cuda.jit
def racy_increment(x):
    x[0] = x[0] + 1  # BUG: read, add, write by every thread with nothing ordering them
# ANCHOR_END: racy


@cuda.jit
def histogram_global(data, histo):
    i = cuda.grid(1)
    if i < data.size:
        cuda.atomic.add(histo, data[i] % BINS, 1)


@cuda.jit
def histogram_no_atomics(data, histo):
    i = cuda.grid(1)
    if i < data.size:
        histo[data[i] % BINS] += 1  # BUG: threads with the same bin overwrite each other's counts


@cuda.jit
def histogram_shared(data, histo):
    local = cuda.shared.array(BINS, int32)
    t = cuda.threadIdx.x
    if t < BINS:
        local[t] = 0
    cuda.syncthreads()
    for i in range(cuda.grid(1), data.size, cuda.gridsize(1)):
        cuda.atomic.add(local, data[i] % BINS, 1)
    cuda.syncthreads()
    if t < BINS:
        cuda.atomic.add(histo, t, local[t])


@cuda.jit
def histogram_shared_no_merge_barrier(data, histo):
    local = cuda.shared.array(BINS, int32)
    t = cuda.threadIdx.x
    if t < BINS:
        local[t] = 0
    cuda.syncthreads()
    for i in range(cuda.grid(1), data.size, cuda.gridsize(1)):
        cuda.atomic.add(local, data[i] % BINS, 1)
    if t < BINS:
        cuda.atomic.add(histo, t, local[t])  # BUG: no syncthreads before the merge: other threads may still be counting


# ANCHOR: launch
def increment(blocks, threads, kernel=atomic_increment):
    x = np.zeros(1, dtype=np.int32)
    kernel[blocks, threads](x)
    return int(x[0])
# ANCHOR_END: launch


def histogram(data, kernel=histogram_global, blocks=None):
    histo = np.zeros(BINS, dtype=np.int32)
    if blocks is None:
        blocks = max(1, (data.size + THREADS - 1) // THREADS)
    kernel[blocks, THREADS](data, histo)
    return histo


def histogram_numpy(data):
    return np.bincount(data % BINS, minlength=BINS).astype(np.int32)


if __name__ == "__main__":
    import racetrack

    print("atomic increment, 10 x 16 threads:", increment(10, 16))
    data = np.random.default_rng(4).integers(0, 1000, 5000).astype(np.int32)
    print("shared histogram:", np.array_equal(histogram(data, histogram_shared, 8), histogram_numpy(data)))
    for broken, shape in ((racy_increment, None), (histogram_no_atomics, None), (histogram_shared_no_merge_barrier, 8)):
        with racetrack.checking(raise_on_finding=False) as report:
            if shape is None and broken is racy_increment:
                increment(10, 16, broken)
            else:
                histogram(data, broken, shape)
        print(report, end="\n\n")
