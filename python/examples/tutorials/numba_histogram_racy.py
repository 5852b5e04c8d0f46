"""A histogram without atomics: two threads that see the same value lose a count.

Expect: RaceError at the # BUG line.
"""
import numpy as np
from racetrack import cuda


@cuda.jit
def histogram(data, hist):
    i = cuda.grid(1)
    if i < data.shape[0]:
        hist[data[i]] += 1  # BUG: not atomic


rng = np.random.default_rng(0)
data = rng.integers(0, 16, 5000).astype(np.int32)
hist = np.zeros(16, dtype=np.int32)
histogram[(data.size + 127) // 128, 128](data, hist)
print(hist, hist.sum(), "of", data.size)
