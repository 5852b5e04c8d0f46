// FIXED: the uint4 histogram with 16 copies of the 256 bins, one per pair of lanes: lanes 2k and 2k + 1 share a word, one counting in its low 16 bits and one in its high 16 bits, in half the shared memory of one copy per lane.
// Thread mapping: as histogram-bytes-uint4, in block-wide rounds (the loop's test is the same for the whole block);
//                 lane l adds 1 (even l) or 1 << 16 (odd l) to copy l / 2, whose bin b is word b * 16 + l / 2.
//                 Every 4095 rounds, and at the end, the block adds its counts to histo and zeroes them:
//                 a lane counts at most 16 bytes a round, so no 16-bit count reaches 65,536.
// Shared memory: 256 × 16 unsigned ints per block (16 KiB).
// Launch: any grid × block; bytes 16-byte aligned (every allocation is); histo has 256 bins, zeroed
//         before the launch.

#define BINS 256u
#define PAIRS 16u
#define FLUSH_ROUNDS 4095u

__device__ void count_word(unsigned int *pair_histo, unsigned int word, unsigned int one)
{
#pragma unroll
    for (int shift = 0; shift < 32; shift += 8) {
        atomicAdd(&pair_histo[((word >> shift) & 0xffu) * PAIRS], one);
    }
}

// Adds the block's counts to histo and zeroes them; every thread of the block must call it.
__device__ void flush(unsigned int *pairs, unsigned int *histo)
{
    __syncthreads();
    for (unsigned int bin = threadIdx.x; bin < BINS; bin += blockDim.x) {
        unsigned int sum = 0;
        for (unsigned int k = 0; k < PAIRS; ++k) {
            // Starting at copy bin / 2, a warp's 32 bins read 32 different banks.
            unsigned int *word = &pairs[bin * PAIRS + (bin / 2 + k) % PAIRS];
            sum += (*word & 0xffffu) + (*word >> 16);
            *word = 0;
        }
        if (sum != 0) {
            atomicAdd(&histo[bin], sum);
        }
    }
    __syncthreads();
}

// ANCHOR: kernel
extern "C" __global__ void histogram_bytes_lane_pairs(const unsigned char *bytes, unsigned int n,
                                                      unsigned int *histo)
{
    __shared__ unsigned int pairs[BINS * PAIRS];
    for (unsigned int i = threadIdx.x; i < BINS * PAIRS; i += blockDim.x) {
        pairs[i] = 0;
    }
    __syncthreads();

    unsigned int *pair_histo = pairs + (threadIdx.x % 32) / 2;
    unsigned int one = threadIdx.x % 2 == 0 ? 1u : 1u << 16;
    unsigned int stride = blockDim.x * gridDim.x;
    unsigned int words = n / 16;
    const uint4 *packed = reinterpret_cast<const uint4 *>(bytes);
    unsigned int rounds = 0;
    for (unsigned int block_first = blockIdx.x * blockDim.x; block_first < words; block_first += stride) {
        unsigned int i = block_first + threadIdx.x;
        if (i < words) {
            uint4 word = packed[i];
            count_word(pair_histo, word.x, one);
            count_word(pair_histo, word.y, one);
            count_word(pair_histo, word.z, one);
            count_word(pair_histo, word.w, one);
        }
        if (++rounds == FLUSH_ROUNDS) {
            flush(pairs, histo);
            rounds = 0;
        }
    }
    for (unsigned int i = 16 * words + blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        atomicAdd(&pair_histo[bytes[i] * PAIRS], one);
    }
    flush(pairs, histo);
}
// ANCHOR_END: kernel
