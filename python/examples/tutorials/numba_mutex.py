"""A mutex from compare-and-swap: one thread per block takes the lock, adds its block's count,
and releases it. A fence orders the update before the release.

Expect: correct
"""
import numpy as np
from racetrack import cuda


@cuda.jit(device=True)
def lock(mutex):
    while cuda.atomic.compare_and_swap(mutex, 0, 1) != 0:
        pass
    cuda.threadfence()


@cuda.jit(device=True)
def unlock(mutex):
    cuda.threadfence()
    cuda.atomic.exch(mutex, 0, 0)


@cuda.jit
def count_blocks(mutex, total):
    if cuda.threadIdx.x == 0:
        lock(mutex)
        total[0] = total[0] + cuda.blockDim.x
        unlock(mutex)


mutex = np.zeros(1, dtype=np.int32)
total = np.zeros(1, dtype=np.int32)
count_blocks[16, 64](mutex, total)
print("threads counted:", total[0])
assert total[0] == 16 * 64
