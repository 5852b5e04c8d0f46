"""Chapter 2, reductions, in CuPy form: one partial sum per block, with a ``RawModule``.

``tree_sync_in_if`` puts ``__syncthreads()`` inside ``if (tid < half)``: only part of the
block reaches that barrier, and the rest never arrive. On a GPU that hangs or computes
garbage; Racetrack reports the barrier divergence (``racetrack.SyncError``) at the ``// BUG``
line. ``tree_sum`` keeps the barrier where every thread meets it.

Run it: ``python cupy_ch2_block_sum.py``.
"""

import numpy as np

import racetrack
from racetrack import cupy as cp

THREADS = 128

module = cp.RawModule(
    code=r"""
extern "C" {

__global__ void tree_sync_in_if(const float *x, int n, float *block_sums)
{
    extern __shared__ float partial[];
    int tid = threadIdx.x;
    float sum = 0.0f;
    for (int i = blockIdx.x * blockDim.x + tid; i < n; i += blockDim.x * gridDim.x) {
        sum += x[i];
    }
    partial[tid] = sum;
    __syncthreads();
    for (int half = blockDim.x / 2; half > 0; half /= 2) {
        if (tid < half) {
            partial[tid] += partial[tid + half];
            __syncthreads(); // BUG: only threads with tid < half reach this barrier
        }
    }
    if (tid == 0) {
        block_sums[blockIdx.x] = partial[0];
    }
}

__global__ void tree_sum(const float *x, int n, float *block_sums)
{
    extern __shared__ float partial[];
    int tid = threadIdx.x;
    float sum = 0.0f;
    for (int i = blockIdx.x * blockDim.x + tid; i < n; i += blockDim.x * gridDim.x) {
        sum += x[i];
    }
    partial[tid] = sum;
    __syncthreads();
    for (int half = blockDim.x / 2; half > 0; half /= 2) {
        if (tid < half) {
            partial[tid] += partial[tid + half];
        }
        __syncthreads();
    }
    if (tid == 0) {
        block_sums[blockIdx.x] = partial[0];
    }
}

}
"""
)


def block_sums(x: np.ndarray, kernel: str = "tree_sum", blocks: int = 4) -> np.ndarray:
    """Each block's partial sum of ``x`` (float32), by the kernel named."""
    x_gpu = cp.asarray(x, dtype=cp.float32)
    sums = cp.empty(blocks, dtype=cp.float32)
    module.get_function(kernel)(
        (blocks,), (THREADS,), (x_gpu, np.int32(x.size), sums), shared_mem=THREADS * 4
    )
    return cp.asnumpy(sums)


if __name__ == "__main__":
    x = np.random.default_rng(3).random(3000).astype(np.float32)
    print("tree_sum:", block_sums(x).sum(dtype=np.float64), " NumPy:", x.sum(dtype=np.float64))
    try:
        block_sums(x, "tree_sync_in_if")
    except racetrack.SyncError as error:
        print(error)
