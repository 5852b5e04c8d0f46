"""Chapter 2, reductions, in PyCUDA form: a sum, three ways.

``tree_no_sync`` halves the block's partial sums in shared memory with no barrier between the
levels, so a thread reads a neighbour's slot while the neighbour may still be writing it.
Racetrack reports the race at the ``// BUG`` line. ``tree_sum`` puts ``__syncthreads()``
between levels; each block writes one partial sum, and the host adds the blocks' partials.
``ReductionKernel`` generates the same two-pass tree from one expression.

Run it: ``python pycuda_ch2_reduction.py``.
"""

import numpy as np

import racetrack
import racetrack.pycuda.autoinit  # noqa: F401
import racetrack.pycuda.driver as drv
from racetrack.pycuda import gpuarray
from racetrack.pycuda.compiler import SourceModule
from racetrack.pycuda.reduction import ReductionKernel

THREADS = 128  # a power of two: the tree halves it

module = SourceModule("""
#define THREADS 128

__global__ void tree_no_sync(const float *x, unsigned int n, float *block_sums)
{
    __shared__ float partial[THREADS];
    unsigned int tid = threadIdx.x;
    float sum = 0.0f;
    for (unsigned int i = blockIdx.x * blockDim.x + tid; i < n; i += blockDim.x * gridDim.x) {
        sum += x[i];
    }
    partial[tid] = sum;
    __syncthreads();
    for (unsigned int half = blockDim.x / 2; half > 0; half /= 2) {
        if (tid < half) {
            partial[tid] += partial[tid + half]; // BUG: no barrier between levels: reads a slot being written
        }
    }
    if (tid == 0) {
        block_sums[blockIdx.x] = partial[0];
    }
}

__global__ void tree_sum(const float *x, unsigned int n, float *block_sums)
{
    __shared__ float partial[THREADS];
    unsigned int tid = threadIdx.x;
    float sum = 0.0f;
    for (unsigned int i = blockIdx.x * blockDim.x + tid; i < n; i += blockDim.x * gridDim.x) {
        sum += x[i];
    }
    partial[tid] = sum;
    __syncthreads();
    for (unsigned int half = blockDim.x / 2; half > 0; half /= 2) {
        if (tid < half) {
            partial[tid] += partial[tid + half];
        }
        __syncthreads();
    }
    if (tid == 0) {
        block_sums[blockIdx.x] = partial[0];
    }
}
""")

total = ReductionKernel(
    np.float32, neutral="0", reduce_expr="a + b", map_expr="x[i]", arguments="const float *x"
)


def block_sums(x: np.ndarray, kernel: str = "tree_sum", blocks: int = 4) -> np.ndarray:
    """Each block's partial sum of ``x`` (float32), by the kernel named."""
    sums = np.empty(blocks, dtype=np.float32)
    module.get_function(kernel)(
        drv.In(np.ascontiguousarray(x, dtype=np.float32)),
        np.uint32(x.size),
        drv.Out(sums),
        block=(THREADS, 1, 1),
        grid=(blocks, 1),
    )
    return sums


def reduction_kernel_sum(x: np.ndarray) -> float:
    """``x``'s sum by the generated two-pass ``ReductionKernel``."""
    return float(total(gpuarray.to_gpu(np.ascontiguousarray(x, dtype=np.float32))).get())


if __name__ == "__main__":
    x = np.random.default_rng(2).random(5000, dtype=np.float32)
    print("tree_sum:", block_sums(x).sum(dtype=np.float64), " NumPy:", x.sum(dtype=np.float64))
    print("ReductionKernel:", reduction_kernel_sum(x))
    try:
        block_sums(x, "tree_no_sync")
    except racetrack.RaceError as error:
        print(error)
