// FIXED: 1D block tiling: each thread computes TM = 8 elements of one column of C, so every value of B it reads from shared memory feeds 8 multiply-adds.
// Thread mapping: 512 threads (1D) compute a BM × BN = 64 × 64 tile of C; thread t owns column t % 64 and rows (t / 64)·8 … (t / 64)·8 + 7 of it.
// Shared memory: a BM × BK = 64 × 8 tile of A and a BK × BN = 8 × 64 tile of B (4 KiB), reloaded for every step of BK along K.
// Launch: block 512 threads; grid N / 64 × M / 64; M and N multiples of 64, K a multiple of 8 (the host refuses other sizes).

#define BM 64
#define BN 64
#define BK 8
#define TM 8

// ANCHOR: kernel
extern "C" __global__ void __launch_bounds__(BM * BN / TM)
matmul_block_tiling_1d(const float *A, const float *B, float *C, unsigned int M, unsigned int N, unsigned int K)
{
    __shared__ float As[BM * BK];
    __shared__ float Bs[BK * BN];
    unsigned int tid = threadIdx.x;
    unsigned int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;
    unsigned int thread_row = tid / BN, thread_col = tid % BN;
    // Each thread copies one element of each tile: the 512 threads cover 64 × 8 and 8 × 64.
    unsigned int a_row = tid / BK, a_col = tid % BK;
    unsigned int b_row = tid / BN, b_col = tid % BN;

    float sums[TM] = {0.0f};
    for (unsigned int k0 = 0; k0 < K; k0 += BK) {
        As[a_row * BK + a_col] = A[(row0 + a_row) * K + k0 + a_col];
        Bs[b_row * BN + b_col] = B[(k0 + b_row) * N + col0 + b_col];
        __syncthreads();
        // ANCHOR: inner
        #pragma unroll
        for (unsigned int k = 0; k < BK; ++k) {
            float b = Bs[k * BN + thread_col];
            for (unsigned int i = 0; i < TM; ++i) {
                sums[i] += As[(thread_row * TM + i) * BK + k] * b;
            }
        }
        // ANCHOR_END: inner
        __syncthreads();
    }
    for (unsigned int i = 0; i < TM; ++i) {
        C[(row0 + thread_row * TM + i) * N + col0 + thread_col] = sums[i];
    }
}
// ANCHOR_END: kernel
