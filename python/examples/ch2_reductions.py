"""Chapter 2, reductions: shared memory, syncthreads, device functions.

Fixed: a tree reduction in shared memory (one partial sum per block, summed on the host), with
a device function for the loads.
Broken: the tree without syncthreads between its steps (race); syncthreads inside an `if`
that only some threads take (barrier divergence).
"""

import numpy as np
from numba import float32

from racetrack import cuda

THREADS = 128


@cuda.jit(device=True)
def load_or_zero(x, i):
    if i < x.size:
        return x[i]
    return 0.0


@cuda.jit
def tree_sum(x, partial):
    cache = cuda.shared.array(THREADS, float32)
    t = cuda.threadIdx.x
    cache[t] = load_or_zero(x, cuda.grid(1))
    cuda.syncthreads()
    step = THREADS // 2
    while step > 0:
        if t < step:
            cache[t] += cache[t + step]
        cuda.syncthreads()
        step //= 2
    if t == 0:
        partial[cuda.blockIdx.x] = cache[0]


@cuda.jit
def tree_sum_no_sync(x, partial):
    cache = cuda.shared.array(THREADS, float32)
    t = cuda.threadIdx.x
    cache[t] = load_or_zero(x, cuda.grid(1))
    cuda.syncthreads()
    step = THREADS // 2
    while step > 0:
        if t < step:
            cache[t] += cache[t + step]  # BUG: no syncthreads after this step: the next one reads unfinished sums
        step //= 2
    if t == 0:
        partial[cuda.blockIdx.x] = cache[0]


@cuda.jit
def tree_sum_sync_in_if(x, partial):
    cache = cuda.shared.array(THREADS, float32)
    t = cuda.threadIdx.x
    cache[t] = load_or_zero(x, cuda.grid(1))
    cuda.syncthreads()
    step = THREADS // 2
    while step > 0:
        if t < step:
            cache[t] += cache[t + step]
            cuda.syncthreads()  # BUG: only threads with t < step reach this barrier
        step //= 2
    if t == 0:
        partial[cuda.blockIdx.x] = cache[0]


def block_sums(x, kernel=tree_sum):
    blocks = max(1, (x.size + THREADS - 1) // THREADS)
    partial = np.zeros(blocks, dtype=np.float32)
    kernel[blocks, THREADS](x, partial)
    return partial


def total(x, kernel=tree_sum):
    return float(block_sums(x, kernel).astype(np.float64).sum())


if __name__ == "__main__":
    import racetrack

    x = np.random.default_rng(1).random(1000, dtype=np.float32)
    print("tree sum:", total(x), "numpy:", float(x.astype(np.float64).sum()))
    for broken in (tree_sum_no_sync, tree_sum_sync_in_if):
        with racetrack.checking(raise_on_finding=False) as report:
            total(x, broken)
        print(report, end="\n\n")
