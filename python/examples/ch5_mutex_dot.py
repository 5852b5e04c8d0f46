"""Chapter 5, a mutex and a dot product: compare_and_swap and exch as a lock, threadfence.

Fixed: a dot product whose blocks leave partial sums for the host; the same with each block
adding its partial to the result under a lock.
Broken: the lock taken by a plain read then a write (two blocks both see it free: a race);
the block sum that reads its neighbour (`cache[t + 1]`): off by a fraction, caught only by an
honest tolerance.
"""

import numpy as np
from numba import float32

from racetrack import cuda

THREADS = 128
#: The typo's cache has one more slot, so that its wrong read stays inside the array.
PADDED = THREADS + 1


@cuda.jit(device=True)
def block_dot(x, y, cache):
    t = cuda.threadIdx.x
    acc = float32(0.0)
    for i in range(cuda.grid(1), x.size, cuda.gridsize(1)):
        acc += x[i] * y[i]
    cache[t] = acc
    cuda.syncthreads()
    step = THREADS // 2
    while step > 0:
        if t < step:
            cache[t] += cache[t + step]
        cuda.syncthreads()
        step //= 2


@cuda.jit
def dot_partial(x, y, partial):
    cache = cuda.shared.array(THREADS, float32)
    block_dot(x, y, cache)
    if cuda.threadIdx.x == 0:
        partial[cuda.blockIdx.x] = cache[0]


@cuda.jit
def dot_mutex(x, y, result, mutex):
    cache = cuda.shared.array(THREADS, float32)
    block_dot(x, y, cache)
    if cuda.threadIdx.x == 0:
        while cuda.atomic.compare_and_swap(mutex, 0, 1) != 0:
            pass
        cuda.threadfence()  # the lock is ours: nothing inside may be seen before it
        result[0] += cache[0]
        cuda.threadfence()
        cuda.atomic.exch(mutex, 0, 0)


@cuda.jit
def dot_plain_lock(x, y, result, mutex):
    cache = cuda.shared.array(THREADS, float32)
    block_dot(x, y, cache)
    if cuda.threadIdx.x == 0:
        while mutex[0] != 0:
            pass
        mutex[0] = 1  # BUG: not atomic: another block can pass the loop before this write lands
        result[0] += cache[0]
        cuda.threadfence()
        mutex[0] = 0


@cuda.jit
def dot_neighbour_typo(x, y, partial):
    cache = cuda.shared.array(PADDED, float32)
    t = cuda.threadIdx.x
    acc = float32(0.0)
    for i in range(cuda.grid(1), x.size, cuda.gridsize(1)):
        acc += x[i] * y[i]
    cache[t] = acc
    if t == 0:
        cache[THREADS] = 0.0
    cuda.syncthreads()
    step = THREADS // 2
    while step > 0:
        if t < step:
            cache[t] += cache[t + step + (1 if step == 1 else 0)]  # BUG: the last step adds cache[2], not cache[1]
        cuda.syncthreads()
        step //= 2
    if t == 0:
        partial[cuda.blockIdx.x] = cache[0]


def dot(x, y, blocks=8, kernel=dot_partial):
    partial = np.zeros(blocks, dtype=np.float32)
    kernel[blocks, THREADS](x, y, partial)
    return float(partial.astype(np.float64).sum())


def dot_locked(x, y, blocks=8, kernel=dot_mutex):
    result = np.zeros(1, dtype=np.float32)
    mutex = np.zeros(1, dtype=np.int32)
    kernel[blocks, THREADS](x, y, result, mutex)
    return float(result[0])


def error_bound(x, y):
    """A float32 dot product's worst-case error: each product and each of at most
    len(x) + log2(THREADS) + blocks additions rounds once, relative to sum |x y|."""
    steps = x.size + 64
    return 2 * steps * np.finfo(np.float32).eps * float(np.abs(x.astype(np.float64) * y).sum())


if __name__ == "__main__":
    import racetrack

    rng = np.random.default_rng(5)
    x = rng.random(3000, dtype=np.float32)
    y = rng.random(3000, dtype=np.float32)
    exact = float(x.astype(np.float64) @ y.astype(np.float64))
    print("dot:", dot(x, y), "locked:", dot_locked(x, y), "exact:", exact, "bound:", error_bound(x, y))
    print("neighbour typo:", dot(x, y, kernel=dot_neighbour_typo))
    with racetrack.checking(raise_on_finding=False) as report:
        dot_locked(x, y, kernel=dot_plain_lock)
    print(report)
