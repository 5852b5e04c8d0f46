"""Chapter 4, atomics, in CuPy form: counting the elements above a threshold.

``count_racy`` bumps one counter with ``*count += 1``: threads read the same old value, add
one, and write it back over each other's. Racetrack reports the race at the ``// BUG`` line.
``count_atomic`` uses ``atomicAdd``, which does the read, add and write as one.

Run it: ``python cupy_ch4_counter.py``. On a GPU: ``import cupy as cp``.
"""

import numpy as np

import racetrack
from racetrack import cupy as cp

source = r"""
extern "C" __global__ void count_racy(const float *x, long long n, float threshold, unsigned int *count)
{
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n && x[i] > threshold) {
        *count += 1; // BUG: read-add-write by many threads at once: counts are lost
    }
}

extern "C" __global__ void count_atomic(const float *x, long long n, float threshold, unsigned int *count)
{
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n && x[i] > threshold) {
        atomicAdd(count, 1u);
    }
}
"""

count_racy = cp.RawKernel(source, "count_racy")
count_atomic = cp.RawKernel(source, "count_atomic")
THREADS = 128


def count_above(x: np.ndarray, threshold: float, kernel=count_atomic) -> int:
    """How many elements of ``x`` (float32) exceed ``threshold``, by the kernel given."""
    x_gpu = cp.asarray(x, dtype=cp.float32)
    count = cp.zeros(1, dtype=cp.uint32)
    blocks = max(1, -(-x.size // THREADS))
    # x.size is a Python int, which CuPy passes as a long long, the kernel's type for n.
    kernel((blocks,), (THREADS,), (x_gpu, x.size, np.float32(threshold), count))
    return int(cp.asnumpy(count)[0])


if __name__ == "__main__":
    x = np.random.default_rng(4).random(10_000).astype(np.float32)
    print("count_atomic:", count_above(x, 0.5), " NumPy:", int((x > 0.5).sum()))
    try:
        count_above(x, 0.5, count_racy)
    except racetrack.RaceError as error:
        print(error)
