// FIXED: the 256-bin shared histogram reading 16 bytes per load (a uint4) and counting them from registers.
// Thread mapping: grid-stride loop over the 16-byte words (thread t takes word t, t + stride, ...); the
//                 last n % 16 bytes go one each to the first threads; block-stride loops over the bins.
// Shared memory: 256 unsigned ints per block (1 KiB).
// Launch: any grid × block; bytes 16-byte aligned (every allocation is); histo has 256 bins, zeroed
//         before the launch.

#define BINS 256u

__device__ void count_word(unsigned int *block_histo, unsigned int word)
{
#pragma unroll
    for (int shift = 0; shift < 32; shift += 8) {
        atomicAdd(&block_histo[(word >> shift) & 0xffu], 1u);
    }
}

// ANCHOR: kernel
extern "C" __global__ void histogram_bytes_uint4(const unsigned char *bytes, unsigned int n,
                                                 unsigned int *histo)
{
    __shared__ unsigned int block_histo[BINS];
    for (unsigned int bin = threadIdx.x; bin < BINS; bin += blockDim.x) {
        block_histo[bin] = 0;
    }
    __syncthreads();

    unsigned int stride = blockDim.x * gridDim.x;
    unsigned int first = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned int words = n / 16;
    const uint4 *packed = reinterpret_cast<const uint4 *>(bytes);
    for (unsigned int i = first; i < words; i += stride) {
        uint4 word = packed[i];
        count_word(block_histo, word.x);
        count_word(block_histo, word.y);
        count_word(block_histo, word.z);
        count_word(block_histo, word.w);
    }
    for (unsigned int i = 16 * words + first; i < n; i += stride) {
        atomicAdd(&block_histo[bytes[i]], 1u);
    }
    __syncthreads();
    for (unsigned int bin = threadIdx.x; bin < BINS; bin += blockDim.x) {
        atomicAdd(&histo[bin], block_histo[bin]);
    }
}
// ANCHOR_END: kernel
