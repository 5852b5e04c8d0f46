"""Chapter 4, atomics, in PyCUDA form: a byte histogram.

``histogram_racy`` counts with ``histo[c] += 1``: a read, an add and a write, so two threads
that meet the same byte both read the old count and one increment is lost. Racetrack reports
the race at the ``// BUG`` line. ``histogram_shared`` counts each block's bytes into shared
memory with ``atomicAdd``, then merges the block's counts into the global histogram once per bin.

Run it: ``python pycuda_ch4_histogram.py``. On a GPU: ``import pycuda.autoinit`` and so on.
"""

import numpy as np

import racetrack
import racetrack.pycuda.autoinit  # noqa: F401 (sets up the device, as pycuda.autoinit does)
import racetrack.pycuda.driver as drv
from racetrack.pycuda import gpuarray
from racetrack.pycuda.compiler import SourceModule

BINS = 256
THREADS = 128

module = SourceModule("""
__global__ void histogram_racy(const unsigned char *bytes, unsigned int n, unsigned int *histo)
{
    unsigned int stride = blockDim.x * gridDim.x;
    for (unsigned int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        histo[bytes[i]] += 1; // BUG: read-add-write by many threads at once: increments are lost
    }
}

__global__ void histogram_shared(const unsigned char *bytes, unsigned int n, unsigned int *histo)
{
    __shared__ unsigned int block_histo[256];
    for (unsigned int bin = threadIdx.x; bin < 256; bin += blockDim.x) {
        block_histo[bin] = 0;
    }
    __syncthreads();
    unsigned int stride = blockDim.x * gridDim.x;
    for (unsigned int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        atomicAdd(&block_histo[bytes[i]], 1u);
    }
    __syncthreads();
    for (unsigned int bin = threadIdx.x; bin < 256; bin += blockDim.x) {
        atomicAdd(&histo[bin], block_histo[bin]);
    }
}
""")


def histogram(data: np.ndarray, kernel: str = "histogram_shared", blocks: int = 4) -> np.ndarray:
    """The count of each byte value in ``data`` (uint8), by the kernel named."""
    data_gpu = gpuarray.to_gpu(np.ascontiguousarray(data, dtype=np.uint8))
    histo = np.zeros(BINS, dtype=np.uint32)
    module.get_function(kernel)(
        data_gpu, np.uint32(data.size), drv.InOut(histo), block=(THREADS, 1, 1), grid=(blocks, 1)
    )
    return histo


if __name__ == "__main__":
    text = np.frombuffer(b"the quick brown fox jumps over the lazy dog " * 40, dtype=np.uint8)
    fixed = histogram(text)
    assert np.array_equal(fixed, np.bincount(text, minlength=BINS))
    print("histogram_shared matches NumPy:", fixed[ord("o")], "o's")
    try:
        histogram(text, "histogram_racy")
    except racetrack.RaceError as error:
        print(error)
