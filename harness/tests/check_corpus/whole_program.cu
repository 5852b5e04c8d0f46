// BROKEN(race): a whole program as tutorials ship it — headers, a CUDA_CHECK macro, host
// helpers, the kernel and main — whose kernel merges its shared histogram into the global one
// before every thread has counted: the barrier before the merge is missing. Fixed (and its host
// code guarded) in whole_program_guarded.cu.
// Thread mapping: grid-stride over the text; each block counts into shared bins, then adds them.
// Shared memory: BINS unsigned ints.
// Launch: THREADS threads per block, any grid.
#include <cstdio>
#include <iostream>
#include <vector>
#include <cuda_runtime.h>

#ifndef BINS
#define BINS 64
#endif
#include "text_bins.h"

#define CUDA_CHECK(call)                                                      \
    do {                                                                      \
        cudaError_t status = (call);                                          \
        if (status != cudaSuccess) {                                          \
            std::cerr << "CUDA error: " << cudaGetErrorString(status) << "\n"; \
            std::exit(1);                                                     \
        }                                                                     \
    } while (0)

static std::vector<unsigned char> make_text(size_t n)
{
    std::vector<unsigned char> text(n);
    for (size_t i = 0; i < n; ++i) {
        text[i] = static_cast<unsigned char>('a' + (i * 7) % 26);
    }
    return text;
}

template <int THREADS>
__global__ void histogram(const unsigned char *text, int n, unsigned int *bins)
{
    __shared__ unsigned int local[BINS];
    for (int b = threadIdx.x; b < BINS; b += THREADS) {
        local[b] = 0;
    }
    __syncthreads();
    for (int i = blockIdx.x * THREADS + threadIdx.x; i < n; i += THREADS * gridDim.x) {
        atomicAdd(&local[bin_of(text[i])], 1u);
    }
    for (int b = threadIdx.x; b < BINS; b += THREADS) {
        atomicAdd(&bins[b], local[b]); // BUG: read before the other threads finished counting
    }
}

int main()
{
    const int n = 1 << 16;
    std::vector<unsigned char> text = make_text(n);
    unsigned char *d_text;
    unsigned int *d_bins;
    CUDA_CHECK(cudaMalloc(&d_text, n));
    CUDA_CHECK(cudaMalloc(&d_bins, BINS * sizeof(unsigned int)));
    CUDA_CHECK(cudaMemcpy(d_text, text.data(), n, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemset(d_bins, 0, BINS * sizeof(unsigned int)));
    histogram<256><<<32, 256>>>(d_text, n, d_bins);
    CUDA_CHECK(cudaGetLastError());
    std::vector<unsigned int> bins(BINS);
    CUDA_CHECK(cudaMemcpy(bins.data(), d_bins, BINS * sizeof(unsigned int), cudaMemcpyDeviceToHost));
    for (int b = 0; b < BINS; ++b) {
        std::printf("%d: %u\n", b, bins[b]);
    }
    cudaFree(d_text);
    cudaFree(d_bins);
    return 0;
}
