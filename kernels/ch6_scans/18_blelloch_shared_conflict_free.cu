// FIXED: 03_blelloch_shared.cu with every shared index padded by one word per 32, so the tree's strided accesses spread over the banks: at most 2-way conflicts where the unpadded tree has 32-way.
// Thread mapping: as 03_blelloch_shared.cu: threads stride over the loads and stores; at each level thread t combines one pair.
// Shared memory: 2048 + 64 unsigned ints (8.25 KiB), static; element i lives at temp[i + i / 32]; n <= 2048.
// Launch: 1 block × (m / 2 … 1024) threads, m = n rounded up to a power of two (at least 2).

#define MAX_N 2048
#define LOG_NUM_BANKS 5
// One word of padding after every 32: elements 32 apart no longer share a bank.
#define CONFLICT_FREE_OFFSET(i) ((i) >> LOG_NUM_BANKS)

// ANCHOR: kernel
extern "C" __global__ void blelloch_shared_conflict_free(const unsigned int *in, unsigned int *out,
                                                         unsigned int n)
{
    __shared__ unsigned int temp[MAX_N + CONFLICT_FREE_OFFSET(MAX_N)];
    unsigned int tid = threadIdx.x;
    unsigned int m = 2;
    while (m < n) {
        m *= 2;
    }
    for (unsigned int i = tid; i < m; i += blockDim.x) {
        temp[i + CONFLICT_FREE_OFFSET(i)] = i < n ? in[i] : 0; // pad with the identity
    }
    unsigned int offset = 1;
    for (unsigned int d = m / 2; d > 0; d /= 2) {
        __syncthreads();
        if (tid < d) {
            unsigned int ai = offset * (2 * tid + 1) - 1;
            unsigned int bi = offset * (2 * tid + 2) - 1;
            temp[bi + CONFLICT_FREE_OFFSET(bi)] += temp[ai + CONFLICT_FREE_OFFSET(ai)];
        }
        offset *= 2;
    }
    if (tid == 0) {
        temp[m - 1 + CONFLICT_FREE_OFFSET(m - 1)] = 0;
    }
    for (unsigned int d = 1; d < m; d *= 2) {
        offset /= 2;
        __syncthreads();
        if (tid < d) {
            unsigned int ai = offset * (2 * tid + 1) - 1;
            unsigned int bi = offset * (2 * tid + 2) - 1;
            ai += CONFLICT_FREE_OFFSET(ai);
            bi += CONFLICT_FREE_OFFSET(bi);
            unsigned int t = temp[ai];
            temp[ai] = temp[bi];
            temp[bi] += t;
        }
    }
    __syncthreads();
    for (unsigned int i = tid; i < n; i += blockDim.x) {
        out[i] = temp[i + CONFLICT_FREE_OFFSET(i)];
    }
}
// ANCHOR_END: kernel
