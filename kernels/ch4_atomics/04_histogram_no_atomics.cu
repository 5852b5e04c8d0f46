// BROKEN(race): lost updates when two threads count the same letter — fixed in 03_histogram_global_atomics.cu
// Thread mapping: grid-stride loop, so any grid covers any length.
// Shared memory: none.
// Launch: any grid × block; histo has 128 bins, zeroed before the launch; bytes >= 128 are skipped.

#define ASCII_BINS 128u

// ANCHOR: kernel
extern "C" __global__ void histogram_no_atomics(const unsigned char *text, unsigned int n,
                                                unsigned int *histo)
{
    unsigned int stride = blockDim.x * gridDim.x;
    for (unsigned int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        unsigned int c = text[i];
        if (c < ASCII_BINS) {
            histo[c] += 1; // BUG: plain read-modify-write; concurrent counts of the same letter are lost
        }
    }
}
// ANCHOR_END: kernel
