"""Chapter 4 in CuPy form: RawKernel with CUDA C written in the .py file, so reports name its
lines here. On a GPU, `import cupy as cp` runs the same file.

Fixed: atomicAdd counter; shared-memory histogram merged after a barrier.
Broken: `x[0] = x[0] + 1` (race); the histogram merged without the barrier (race).
"""

import numpy as np

# ANCHOR: import
import racetrack.cupy as cp  # on a GPU: import cupy as cp
# ANCHOR_END: import

BINS = 16
THREADS = 128

# ANCHOR: counters
counters = r"""
extern "C" __global__ void atomic_increment(int *x) {
    atomicAdd(x, 1);
}

extern "C" __global__ void racy_increment(int *x) {
    x[0] = x[0] + 1;  // BUG: read, add, write by every thread with nothing ordering them
}
"""

histograms = r"""
#define BINS 16
extern "C" __global__ void histogram_shared(const int *data, int n, unsigned int *histo) {
    __shared__ unsigned int local[BINS];
    if (threadIdx.x < BINS) local[threadIdx.x] = 0;
    __syncthreads();
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        atomicAdd(&local[data[i] % BINS], 1u);
    __syncthreads();
    if (threadIdx.x < BINS) atomicAdd(&histo[threadIdx.x], local[threadIdx.x]);
}

extern "C" __global__ void histogram_no_merge_barrier(const int *data, int n, unsigned int *histo) {
    __shared__ unsigned int local[BINS];
    if (threadIdx.x < BINS) local[threadIdx.x] = 0;
    __syncthreads();
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        atomicAdd(&local[data[i] % BINS], 1u);
    if (threadIdx.x < BINS) atomicAdd(&histo[threadIdx.x], local[threadIdx.x]);  // BUG: no __syncthreads() before the merge
}
"""

atomic_increment = cp.RawKernel(counters, "atomic_increment")
racy_increment = cp.RawKernel(counters, "racy_increment")
# ANCHOR_END: counters
module = cp.RawModule(code=histograms)
histogram_shared = module.get_function("histogram_shared")
histogram_no_merge_barrier = module.get_function("histogram_no_merge_barrier")


# ANCHOR: launch
def increment(blocks, threads, kernel=atomic_increment):
    x = cp.zeros(1, dtype=cp.int32)
    kernel((blocks,), (threads,), (x,))
    return int(x.get()[0])
# ANCHOR_END: launch


def histogram(data, blocks=4, kernel=histogram_shared):
    histo = cp.zeros(BINS, dtype=cp.uint32)
    kernel((blocks,), (THREADS,), (cp.asarray(data), np.int32(data.size), histo))
    return cp.asnumpy(histo)


if __name__ == "__main__":
    import racetrack

    print("atomic increment, 10 x 16 threads:", increment(10, 16))
    data = np.random.default_rng(4).integers(0, 1000, 5000).astype(np.int32)
    print("histogram:", np.array_equal(histogram(data), np.bincount(data % BINS, minlength=BINS)))
    with racetrack.checking(raise_on_finding=False) as report:
        increment(10, 16, racy_increment)
        histogram(data, 4, histogram_no_merge_barrier)
    print(report)
