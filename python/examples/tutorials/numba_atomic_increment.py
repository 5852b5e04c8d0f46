"""The same counter with an atomic add: no update is lost.

Expect: correct
"""
import numpy as np
from racetrack import cuda


@cuda.jit
def increment_counter(counter):
    cuda.atomic.add(counter, 0, 1)


counter = np.zeros(1, dtype=np.int32)
increment_counter[64, 128](counter)
print("Counter:", counter[0])
assert counter[0] == 64 * 128
