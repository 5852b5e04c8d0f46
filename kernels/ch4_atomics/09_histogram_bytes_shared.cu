// FIXED: 256-bin histogram of bytes, privatized in shared memory: histogram-shared with a bin for every byte value.
// Thread mapping: grid-stride loop over the bytes; block-stride loops over the 256 bins.
// Shared memory: 256 unsigned ints per block (1 KiB).
// Launch: any grid × block; histo has 256 bins, zeroed before the launch.

#define BINS 256u

// ANCHOR: kernel
extern "C" __global__ void histogram_bytes_shared(const unsigned char *bytes, unsigned int n,
                                                  unsigned int *histo)
{
    __shared__ unsigned int block_histo[BINS];
    for (unsigned int bin = threadIdx.x; bin < BINS; bin += blockDim.x) {
        block_histo[bin] = 0;
    }
    __syncthreads();

    unsigned int stride = blockDim.x * gridDim.x;
    for (unsigned int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        atomicAdd(&block_histo[bytes[i]], 1u);
    }
    __syncthreads();
    for (unsigned int bin = threadIdx.x; bin < BINS; bin += blockDim.x) {
        atomicAdd(&histo[bin], block_histo[bin]);
    }
}
// ANCHOR_END: kernel
