// FIXED: histogram of 7-bit ASCII bytes with one atomicAdd on global memory per byte.
// Thread mapping: grid-stride loop, so any grid covers any length.
// Shared memory: none.
// Launch: any grid × block; histo has 128 bins, zeroed before the launch; bytes >= 128 are skipped.

#define ASCII_BINS 128u

// ANCHOR: kernel
extern "C" __global__ void histogram_global_atomics(const unsigned char *text, unsigned int n,
                                                    unsigned int *histo)
{
    unsigned int stride = blockDim.x * gridDim.x;
    for (unsigned int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        unsigned int c = text[i];
        if (c < ASCII_BINS) {
            atomicAdd(&histo[c], 1u);
        }
    }
}
// ANCHOR_END: kernel
