"""A "lock" taken by reading the flag and then writing it: two blocks both see it free.

Expect: RaceError at the # BUG line.
"""
import numpy as np
from racetrack import cuda


@cuda.jit
def count_blocks(mutex, total):
    if cuda.threadIdx.x == 0:
        while mutex[0] != 0:  # BUG: a plain read; another block can take the lock in between
            pass
        mutex[0] = 1
        total[0] = total[0] + cuda.blockDim.x
        mutex[0] = 0


mutex = np.zeros(1, dtype=np.int32)
total = np.zeros(1, dtype=np.int32)
count_blocks[16, 64](mutex, total)
print("threads counted:", total[0], "of", 16 * 64)
