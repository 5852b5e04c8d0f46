// FIXED: the uint4 histogram with warp aggregation: lanes holding the same byte find each other with __match_any_sync and one of them adds for all.
// Thread mapping: as histogram-bytes-uint4, but a warp runs the word loop as long as any of its lanes has
//                 a word, so all 32 lanes meet at every __match_any_sync; lanes without a word take part
//                 with a key no byte has. Block-stride loops over the bins.
// Shared memory: 256 unsigned ints per block (1 KiB).
// Launch: any grid × block whose blockDim.x is a multiple of 32 (whole warps); bytes 16-byte aligned
//         (every allocation is); histo has 256 bins, zeroed before the launch.

#define BINS 256u
#define NO_BYTE 0x100u

__device__ void count_byte(unsigned int *block_histo, unsigned int key)
{
    unsigned int same = __match_any_sync(0xffffffffu, key);
    // The lowest lane holding this key adds the count of all of them.
    if (key != NO_BYTE && (threadIdx.x % 32) == __ffs(same) - 1) {
        atomicAdd(&block_histo[key], __popc(same));
    }
}

__device__ void count_word(unsigned int *block_histo, unsigned int word, bool valid)
{
#pragma unroll
    for (int shift = 0; shift < 32; shift += 8) {
        count_byte(block_histo, valid ? (word >> shift) & 0xffu : NO_BYTE);
    }
}

// ANCHOR: kernel
extern "C" __global__ void histogram_bytes_warp_aggregated(const unsigned char *bytes,
                                                           unsigned int n, unsigned int *histo)
{
    __shared__ unsigned int block_histo[BINS];
    for (unsigned int bin = threadIdx.x; bin < BINS; bin += blockDim.x) {
        block_histo[bin] = 0;
    }
    __syncthreads();

    unsigned int stride = blockDim.x * gridDim.x;
    unsigned int lane = threadIdx.x % 32;
    unsigned int words = n / 16;
    const uint4 *packed = reinterpret_cast<const uint4 *>(bytes);
    // The warp's first word: the loop runs while it is below `words`, the same test for all 32 lanes.
    for (unsigned int warp_first = blockIdx.x * blockDim.x + threadIdx.x - lane; warp_first < words;
         warp_first += stride) {
        unsigned int i = warp_first + lane;
        bool valid = i < words;
        uint4 word = valid ? packed[i] : make_uint4(0, 0, 0, 0);
        count_word(block_histo, word.x, valid);
        count_word(block_histo, word.y, valid);
        count_word(block_histo, word.z, valid);
        count_word(block_histo, word.w, valid);
    }
    for (unsigned int i = 16 * words + blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        atomicAdd(&block_histo[bytes[i]], 1u);
    }
    __syncthreads();
    for (unsigned int bin = threadIdx.x; bin < BINS; bin += blockDim.x) {
        atomicAdd(&histo[bin], block_histo[bin]);
    }
}
// ANCHOR_END: kernel
