"""Chapter 6, scans, in CuPy form: an inclusive prefix sum of one block (Hillis and Steele).

``scan_single_buffer`` adds ``buf[tid - offset]`` into ``buf[tid]`` in place: a thread reads a
slot that another thread is overwriting at the same step. Racetrack reports the race at the
``// BUG`` line. ``scan_double_buffer`` reads one buffer and writes the other, with a barrier
between steps, so every read sees the previous step's values.

Run it: ``python cupy_ch6_scan.py``.
"""

import numpy as np

import racetrack
from racetrack import cupy as cp

MAX_THREADS = 1024

module = cp.RawModule(
    code=r"""
#define MAX_THREADS 1024

extern "C" __global__ void scan_single_buffer(const int *in, int *out, int n)
{
    __shared__ int buf[MAX_THREADS];
    int tid = threadIdx.x;
    buf[tid] = tid < n ? in[tid] : 0;
    __syncthreads();
    for (int offset = 1; offset < blockDim.x; offset *= 2) {
        if (tid >= offset) {
            buf[tid] += buf[tid - offset]; // BUG: buf[tid - offset] may already hold this step's sum
        }
        __syncthreads();
    }
    if (tid < n) {
        out[tid] = buf[tid];
    }
}

extern "C" __global__ void scan_double_buffer(const int *in, int *out, int n)
{
    __shared__ int buf[2][MAX_THREADS];
    int tid = threadIdx.x;
    int from = 0;
    buf[from][tid] = tid < n ? in[tid] : 0;
    __syncthreads();
    for (int offset = 1; offset < blockDim.x; offset *= 2) {
        int to = 1 - from;
        buf[to][tid] = tid >= offset ? buf[from][tid] + buf[from][tid - offset] : buf[from][tid];
        __syncthreads();
        from = to;
    }
    if (tid < n) {
        out[tid] = buf[from][tid];
    }
}
"""
)


def inclusive_scan(x: np.ndarray, kernel: str = "scan_double_buffer") -> np.ndarray:
    """The running sums of ``x`` (int32, at most 1024 elements), by the kernel named."""
    if not 1 <= x.size <= MAX_THREADS:
        raise ValueError(f"one block scans 1 to {MAX_THREADS} elements, not {x.size}")
    threads = 1 << max(5, (x.size - 1).bit_length())  # a power of two, at least a warp
    x_gpu = cp.asarray(x, dtype=cp.int32)
    out = cp.empty(x.size, dtype=cp.int32)
    module.get_function(kernel)((1,), (threads,), (x_gpu, out, np.int32(x.size)))
    return cp.asnumpy(out)


if __name__ == "__main__":
    x = np.random.default_rng(6).integers(-100, 100, 700).astype(np.int32)
    assert np.array_equal(inclusive_scan(x), np.cumsum(x, dtype=np.int32))
    print("scan_double_buffer matches NumPy's cumsum")
    try:
        inclusive_scan(x, "scan_single_buffer")
    except racetrack.RaceError as error:
        print(error)
