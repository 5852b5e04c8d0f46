// FIXED: one file of a multi-file sample, checked as it is: its own header declares the host
// entry points that another file defines, a book-style helper header (Windows line endings)
// brings host error handling, a host thread type and a host timer class, the program includes
// the driver API and cuBLAS, and keeps a device buffer in a host variable. `racetrack check`
// compiles only the kernel's part of each.
// Thread mapping: grid-stride over the data; each block counts into shared bins, then adds them.
// Shared memory: HISTO_BINS unsigned ints.
// Launch: any grid and block; d_histogram has HISTO_BINS zeroed bins.
#include <cuda.h>
#include <cublas_v2.h>
#include <helper_cuda.h>
#include "histo_common.h"
#include "../common/timing.h"

static uint *d_partial = NULL;

__global__ void histogramKernel(uint *d_histogram, const uint *d_data, uint count)
{
    __shared__ uint bins[HISTO_BINS];
    for (uint b = threadIdx.x; b < HISTO_BINS; b += blockDim.x) {
        bins[b] = 0;
    }
    __syncthreads();
    for (uint i = blockIdx.x * blockDim.x + threadIdx.x; i < count; i += blockDim.x * gridDim.x) {
        atomicAdd(&bins[bin_of(d_data[i])], 1u);
    }
    __syncthreads();
    for (uint b = threadIdx.x; b < HISTO_BINS; b += blockDim.x) {
        atomicAdd(&d_histogram[b], bins[b]);
    }
}

extern "C" void histogramInit(void)
{
    HANDLE_ERROR(cudaMalloc((void **)&d_partial, HISTO_BINS * sizeof(uint)));
}

extern "C" void histogramRun(uint *d_histogram, const uint *d_data, uint count)
{
    HostTimer timer;
    histogramKernel<<<4, 64>>>(d_histogram, d_data, count);
    HANDLE_ERROR(cudaGetLastError());
    printf("%.3f ms\n", timer.elapsed());
}

extern "C" void histogramClose(void)
{
    HANDLE_ERROR(cudaFree(d_partial));
}
