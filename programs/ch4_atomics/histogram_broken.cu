// BROKEN(race): histogram.cu counting into shared memory with a plain += 1: two threads counting the same letter lose one of the counts — fixed in histogram.cu
// Build: nvcc -o histogram_broken programs/ch4_atomics/histogram_broken.cu
// Run: ./histogram_broken 4096
// Expect: race at the BUG line: threads of one block read and write the same block_histo bin with no atomic between
// Thread mapping: grid-stride loop over the text; block-stride loops over the 26 bins.
// Shared memory: 26 unsigned ints per block (104 bytes).
// Launch: min(⌈n / 256⌉, 32) blocks of 256 threads; n, the first argument, is the text's length in bytes.

#include "../common.h"

#include <algorithm>
#include <vector>

#define BINS 26

// ANCHOR: kernel
__global__ void letter_histogram(const char *text, unsigned int n, unsigned int *histo)
{
    __shared__ unsigned int block_histo[BINS];
    for (unsigned int bin = threadIdx.x; bin < BINS; bin += blockDim.x) {
        block_histo[bin] = 0;
    }
    __syncthreads();
    for (unsigned int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
        int bin = text[i] - 'a';
        if (bin >= 0 && bin < BINS) {
            block_histo[bin] += 1; // BUG: read, add, write: another thread's count of the same letter in between is lost
        }
    }
    __syncthreads();
    // Other blocks add into the same global bins, so this addition is atomic too.
    for (unsigned int bin = threadIdx.x; bin < BINS; bin += blockDim.x) {
        atomicAdd(&histo[bin], block_histo[bin]);
    }
}
// ANCHOR_END: kernel

int main(int argc, char **argv)
{
    const unsigned int n = size_arg(argc, argv, 1, 4096);
    const unsigned int threads = 256, blocks = std::min((n + threads - 1) / threads, 32u);

    // Letters only, skewed towards the start of the alphabet (the smaller of two draws),
    // so that the bins differ and many threads hit the same few at once.
    Lcg rng{4};
    std::vector<char> text(n);
    for (char &c : text) {
        c = (char)('a' + std::min(rng.next() % BINS, rng.next() % BINS));
    }

    char *d_text;
    unsigned int *d_histo;
    CUDA_CHECK(cudaMalloc(&d_text, n));
    CUDA_CHECK(cudaMalloc(&d_histo, BINS * sizeof(unsigned int)));
    CUDA_CHECK(cudaMemcpy(d_text, text.data(), n, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemset(d_histo, 0, BINS * sizeof(unsigned int)));
    letter_histogram<<<blocks, threads>>>(d_text, n, d_histo);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize());
    unsigned int histo[BINS];
    CUDA_CHECK(cudaMemcpy(histo, d_histo, sizeof(histo), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaFree(d_text));
    CUDA_CHECK(cudaFree(d_histo));

    unsigned int want[BINS] = {};
    for (char c : text) {
        ++want[c - 'a'];
    }
    unsigned int total = 0;
    int top = 0;
    for (int bin = 0; bin < BINS; ++bin) {
        if (histo[bin] != want[bin]) {
            std::printf("histogram of %u bytes: bin '%c' holds %u, the CPU counted %u\n", n, 'a' + bin, histo[bin],
                        want[bin]);
            return 1;
        }
        total += histo[bin];
        top = histo[bin] > histo[top] ? bin : top;
    }
    std::printf("histogram of %u bytes: %d bins, total %u, most common '%c' (%u), matches the CPU\n", n, BINS, total,
                'a' + top, histo[top]);
    return 0;
}
