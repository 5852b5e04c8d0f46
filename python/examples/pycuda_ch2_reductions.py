"""Chapter 2 in PyCUDA form: SourceModule with CUDA C written in the .py file (PyCUDA wraps it
in extern "C"), so reports name its lines here. On a GPU, the `pycuda` imports run the same
file.

Fixed: a shared-memory tree reduction, one partial sum per block.
Broken: the tree without __syncthreads() between its steps (race).
"""

import numpy as np

# ANCHOR: import
import racetrack.pycuda.autoinit  # noqa: F401  on a GPU: import pycuda.autoinit
import racetrack.pycuda.driver as drv  # on a GPU: import pycuda.driver as drv
from racetrack.pycuda.compiler import SourceModule  # on a GPU: from pycuda.compiler import SourceModule
# ANCHOR_END: import

THREADS = 128

# ANCHOR: module
module = SourceModule("""
#define THREADS 128
__global__ void tree_sum(const float *x, int n, float *partial) {
    __shared__ float cache[THREADS];
    int t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
    cache[t] = i < n ? x[i] : 0.0f;
    __syncthreads();
    for (int step = THREADS / 2; step > 0; step /= 2) {
        if (t < step) cache[t] += cache[t + step];
        __syncthreads();
    }
    if (t == 0) partial[blockIdx.x] = cache[0];
}

__global__ void tree_sum_no_sync(const float *x, int n, float *partial) {
    __shared__ float cache[THREADS];
    int t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
    cache[t] = i < n ? x[i] : 0.0f;
    __syncthreads();
    for (int step = THREADS / 2; step > 0; step /= 2) {
        if (t < step) cache[t] += cache[t + step];  // BUG: no __syncthreads() after each step
    }
    if (t == 0) partial[blockIdx.x] = cache[0];
}
""")
tree_sum = module.get_function("tree_sum")
tree_sum_no_sync = module.get_function("tree_sum_no_sync")
# ANCHOR_END: module


def block_sums(x, kernel=tree_sum):
    blocks = max(1, (x.size + THREADS - 1) // THREADS)
    partial = np.zeros(blocks, np.float32)
    kernel(drv.In(x), np.int32(x.size), drv.Out(partial), block=(THREADS, 1, 1), grid=(blocks, 1))
    return partial


# ANCHOR: prepared
def block_sums_prepared(x):
    """The same launch through PyCUDA's prepared call: the types fixed once, then plain numbers."""
    blocks = max(1, (x.size + THREADS - 1) // THREADS)
    x_gpu, partial_gpu = drv.to_device(x), drv.mem_alloc(blocks * 4)
    tree_sum = module.get_function("tree_sum").prepare("PiP")  # const float *x, int n, float *partial
    tree_sum.prepared_call((blocks, 1), (THREADS, 1, 1), x_gpu, x.size, partial_gpu)
    return drv.from_device(partial_gpu, (blocks,), np.float32)
# ANCHOR_END: prepared


if __name__ == "__main__":
    import racetrack

    x = np.random.default_rng(2).random(1000, dtype=np.float32)
    print("tree sum:", float(block_sums(x).astype(np.float64).sum()), "numpy:", float(x.astype(np.float64).sum()))
    with racetrack.checking(raise_on_finding=False) as report:
        block_sums(x, tree_sum_no_sync)
    print(report)
