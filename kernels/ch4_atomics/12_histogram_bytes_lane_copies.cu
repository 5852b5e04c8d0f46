// FIXED: the uint4 histogram with 32 copies of the 256 bins, one per lane of a warp, so no two lanes of a warp ever add to one address or one bank.
// Thread mapping: as histogram-bytes-uint4; lane l = threadIdx.x % 32 counts into copy l, whose bin b is
//                 word b * 32 + l of shared memory, in bank l. The merge sums bin b's 32 copies.
// Shared memory: 256 × 32 unsigned ints per block (32 KiB).
// Launch: any grid × block; bytes 16-byte aligned (every allocation is); histo has 256 bins, zeroed
//         before the launch.

#define BINS 256u
#define LANES 32u

__device__ void count_word(unsigned int *lane_histo, unsigned int word)
{
#pragma unroll
    for (int shift = 0; shift < 32; shift += 8) {
        atomicAdd(&lane_histo[((word >> shift) & 0xffu) * LANES], 1u);
    }
}

// ANCHOR: kernel
extern "C" __global__ void histogram_bytes_lane_copies(const unsigned char *bytes, unsigned int n,
                                                       unsigned int *histo)
{
    __shared__ unsigned int copies[BINS * LANES];
    for (unsigned int i = threadIdx.x; i < BINS * LANES; i += blockDim.x) {
        copies[i] = 0;
    }
    __syncthreads();

    // Lane l's copy starts at word l: bin b of it is word b * 32 + l, always in bank l.
    unsigned int *lane_histo = copies + threadIdx.x % LANES;
    unsigned int stride = blockDim.x * gridDim.x;
    unsigned int first = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned int words = n / 16;
    const uint4 *packed = reinterpret_cast<const uint4 *>(bytes);
    for (unsigned int i = first; i < words; i += stride) {
        uint4 word = packed[i];
        count_word(lane_histo, word.x);
        count_word(lane_histo, word.y);
        count_word(lane_histo, word.z);
        count_word(lane_histo, word.w);
    }
    for (unsigned int i = 16 * words + first; i < n; i += stride) {
        atomicAdd(&lane_histo[bytes[i] * LANES], 1u);
    }
    __syncthreads();
    // Thread t sums bin t's copies starting at copy t % 32, so a warp's 32 reads hit 32 banks.
    for (unsigned int bin = threadIdx.x; bin < BINS; bin += blockDim.x) {
        unsigned int sum = 0;
        for (unsigned int k = 0; k < LANES; ++k) {
            sum += copies[bin * LANES + (bin + k) % LANES];
        }
        atomicAdd(&histo[bin], sum);
    }
}
// ANCHOR_END: kernel
