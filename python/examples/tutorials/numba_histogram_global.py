"""A histogram with global atomics, a grid-stride loop over the data.

Expect: correct
"""
import numpy as np
from racetrack import cuda


@cuda.jit
def histogram(data, hist):
    start = cuda.grid(1)
    stride = cuda.gridsize(1)
    for i in range(start, data.shape[0], stride):
        cuda.atomic.add(hist, data[i], 1)


rng = np.random.default_rng(0)
data = rng.integers(0, 16, 5000).astype(np.int32)
hist = np.zeros(16, dtype=np.int32)
histogram[8, 128](data, hist)
print(hist)
assert np.array_equal(hist, np.bincount(data, minlength=16))
