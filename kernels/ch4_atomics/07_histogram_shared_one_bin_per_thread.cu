// BROKEN(wrong result): assumes blockDim.x == 128, one bin per thread — fixed in 05_histogram_shared.cu
// Thread mapping: grid-stride loop over the text; thread t zeroes and merges bin t only.
// Shared memory: 128 unsigned ints per block (512 bytes).
// Launch: right only with 128 threads per block; fewer leave bins unzeroed and unmerged,
//         more index past the end of block_histo.

#define ASCII_BINS 128u

// ANCHOR: kernel
extern "C" __global__ void histogram_shared_one_bin_per_thread(const unsigned char *text, unsigned int n,
                                                               unsigned int *histo)
{
    __shared__ unsigned int block_histo[ASCII_BINS];
    block_histo[threadIdx.x] = 0; // BUG: bins >= blockDim.x are never zeroed (or merged, below)
    __syncthreads();

    unsigned int stride = blockDim.x * gridDim.x;
    for (unsigned int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        unsigned int c = text[i];
        if (c < ASCII_BINS) {
            atomicAdd(&block_histo[c], 1u);
        }
    }
    __syncthreads();
    atomicAdd(&histo[threadIdx.x], block_histo[threadIdx.x]);
}
// ANCHOR_END: kernel
