// FIXED: privatized histogram for any bin count, sized at launch with dynamic shared memory.
// Thread mapping: grid-stride loop over the values; block-stride loops over the bins.
// Shared memory: `bins` unsigned ints per block, passed as the launch's dynamic shared bytes.
// Launch: any grid × block with bins * 4 bytes of dynamic shared memory; values >= bins are skipped.

// ANCHOR: kernel
extern "C" __global__ void histogram_any_bins(const unsigned int *values, unsigned int n,
                                              unsigned int *histo, unsigned int bins)
{
    extern __shared__ unsigned int block_histo[];
    for (unsigned int bin = threadIdx.x; bin < bins; bin += blockDim.x) {
        block_histo[bin] = 0;
    }
    __syncthreads();

    unsigned int stride = blockDim.x * gridDim.x;
    for (unsigned int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        unsigned int v = values[i];
        if (v < bins) {
            atomicAdd(&block_histo[v], 1u);
        }
    }
    __syncthreads();
    for (unsigned int bin = threadIdx.x; bin < bins; bin += blockDim.x) {
        atomicAdd(&histo[bin], block_histo[bin]);
    }
}
// ANCHOR_END: kernel
