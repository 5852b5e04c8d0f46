"""The Hillis and Steele scan in a single buffer: a thread adds a neighbour's value that the
neighbour is overwriting in the same step. A GPU often hides this (warps in lockstep).

Expect: RaceError at the # BUG line.
"""
import numpy as np
from numba import int32
from racetrack import cuda

N = 256


@cuda.jit
def scan(x, out):
    temp = cuda.shared.array(N, int32)
    t = cuda.threadIdx.x
    temp[t] = x[t]
    cuda.syncthreads()
    offset = 1
    while offset < N:
        if t >= offset:
            temp[t] += temp[t - offset]  # BUG: temp[t - offset] may already hold this step's sum
        cuda.syncthreads()
        offset *= 2
    out[t] = temp[t]


x = np.random.default_rng(7).integers(-50, 50, N).astype(np.int32)
out = np.zeros(N, dtype=np.int32)
scan[1, N](x, out)
print(out[:8])
