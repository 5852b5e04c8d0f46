// BROKEN(race): merges bins other threads are still counting — fixed in 05_histogram_shared.cu
// Thread mapping: grid-stride loop over the text; block-stride loops over the 128 bins.
// Shared memory: 128 unsigned ints per block (512 bytes).
// Launch: any grid × block; histo has 128 bins, zeroed before the launch; bytes >= 128 are skipped.

#define ASCII_BINS 128u

// ANCHOR: kernel
extern "C" __global__ void histogram_shared_no_merge_barrier(const unsigned char *text, unsigned int n,
                                                             unsigned int *histo)
{
    __shared__ unsigned int block_histo[ASCII_BINS];
    for (unsigned int bin = threadIdx.x; bin < ASCII_BINS; bin += blockDim.x) {
        block_histo[bin] = 0;
    }
    __syncthreads();

    unsigned int stride = blockDim.x * gridDim.x;
    for (unsigned int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        unsigned int c = text[i];
        if (c < ASCII_BINS) {
            atomicAdd(&block_histo[c], 1u);
        }
    }
    // ANCHOR: merge
    for (unsigned int bin = threadIdx.x; bin < ASCII_BINS; bin += blockDim.x) {
        atomicAdd(&histo[bin], block_histo[bin]); // BUG: no __syncthreads() above: other threads may still be counting into this bin
    }
    // ANCHOR_END: merge
}
// ANCHOR_END: kernel
