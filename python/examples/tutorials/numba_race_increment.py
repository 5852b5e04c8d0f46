"""Every thread adds one to a single counter with a plain read and write: updates are lost.

Expect: RaceError at the # BUG line.
"""
import numpy as np
from racetrack import cuda


@cuda.jit
def increment_counter(counter):
    counter[0] = counter[0] + 1  # BUG: read-modify-write from every thread at once


counter = np.zeros(1, dtype=np.int32)
increment_counter[64, 128](counter)
print("Counter:", counter[0], "expected:", 64 * 128)
