"""Chapter 6, scans: Hillis-Steele inclusive scan in one block, double-buffered.

Fixed: two buffers in shared memory, swapped after each step.
Broken: one buffer, read and written in the same step (a race that real GPUs' lockstep warps
often hide; the emulator's racecheck does not).
"""

import numpy as np
from numba import int32

from racetrack import cuda

THREADS = 256


@cuda.jit
def hillis_steele(x, out):
    buffers = cuda.shared.array((2, THREADS), int32)
    t = cuda.threadIdx.x
    n = x.size
    write = 0
    buffers[write, t] = x[t] if t < n else 0
    cuda.syncthreads()
    offset = 1
    while offset < n:
        write = 1 - write
        read = 1 - write
        if t >= offset:
            buffers[write, t] = buffers[read, t] + buffers[read, t - offset]
        else:
            buffers[write, t] = buffers[read, t]
        cuda.syncthreads()
        offset *= 2
    if t < n:
        out[t] = buffers[write, t]


@cuda.jit
def hillis_steele_single_buffer(x, out):
    buffer = cuda.shared.array(THREADS, int32)
    t = cuda.threadIdx.x
    n = x.size
    buffer[t] = x[t] if t < n else 0
    cuda.syncthreads()
    offset = 1
    while offset < n:
        if t >= offset:
            buffer[t] += buffer[t - offset]  # BUG: thread t - offset may already have updated what t reads
        cuda.syncthreads()
        offset *= 2
    if t < n:
        out[t] = buffer[t]


def inclusive_scan(x, kernel=hillis_steele):
    if not 1 <= x.size <= THREADS:
        raise ValueError(f"one block scans 1 to {THREADS} elements")
    out = np.zeros_like(x)
    kernel[1, THREADS](x, out)
    return out


if __name__ == "__main__":
    import racetrack

    x = np.random.default_rng(6).integers(-50, 50, 200).astype(np.int32)
    print("scan:", np.array_equal(inclusive_scan(x), np.cumsum(x)))
    with racetrack.checking(raise_on_finding=False) as report:
        inclusive_scan(x, hillis_steele_single_buffer)
    print(report)
