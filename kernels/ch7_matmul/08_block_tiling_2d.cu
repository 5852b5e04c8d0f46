// FIXED: 2D block tiling: each thread computes an 8 × 8 block of C from 8 values of A and 8 of B held in registers, 64 multiply-adds for 16 shared-memory reads.
// Thread mapping: 256 threads (1D) compute a BM × BN = 128 × 128 tile of C as a 16 × 16 grid of 8 × 8 blocks; thread t owns block row t / 16, block column t % 16.
// Shared memory: a BM × BK = 128 × 8 tile of A and a BK × BN = 8 × 128 tile of B (8 KiB), reloaded for every step of BK along K.
// Launch: block 256 threads; grid N / 128 × M / 128; M and N multiples of 128, K a multiple of 8 (the host refuses other sizes).

#define BM 128
#define BN 128
#define BK 8
#define TM 8
#define TN 8
#define THREADS (BM * BN / (TM * TN))

// ANCHOR: kernel
extern "C" __global__ void __launch_bounds__(THREADS)
matmul_block_tiling_2d(const float *A, const float *B, float *C, unsigned int M, unsigned int N, unsigned int K)
{
    __shared__ float As[BM * BK];
    __shared__ float Bs[BK * BN];
    unsigned int tid = threadIdx.x;
    unsigned int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;
    unsigned int thread_row = tid / (BN / TN), thread_col = tid % (BN / TN);
    // 256 threads copy a 128 × 8 tile of A in 4 passes of 32 rows, and 8 × 128 of B in 4 passes of 2 rows.
    unsigned int a_row = tid / BK, a_col = tid % BK;
    unsigned int b_row = tid / BN, b_col = tid % BN;
    const unsigned int a_stride = THREADS / BK, b_stride = THREADS / BN;

    float sums[TM][TN] = {{0.0f}};
    float a_regs[TM], b_regs[TN];
    for (unsigned int k0 = 0; k0 < K; k0 += BK) {
        for (unsigned int r = 0; r < BM; r += a_stride) {
            As[(a_row + r) * BK + a_col] = A[(row0 + a_row + r) * K + k0 + a_col];
        }
        for (unsigned int r = 0; r < BK; r += b_stride) {
            Bs[(b_row + r) * BN + b_col] = B[(k0 + b_row + r) * N + col0 + b_col];
        }
        __syncthreads();
        // ANCHOR: inner
        #pragma unroll
        for (unsigned int k = 0; k < BK; ++k) {
            for (unsigned int i = 0; i < TM; ++i) {
                a_regs[i] = As[(thread_row * TM + i) * BK + k];
            }
            for (unsigned int j = 0; j < TN; ++j) {
                b_regs[j] = Bs[k * BN + thread_col * TN + j];
            }
            for (unsigned int i = 0; i < TM; ++i) {
                for (unsigned int j = 0; j < TN; ++j) {
                    sums[i][j] += a_regs[i] * b_regs[j];
                }
            }
        }
        // ANCHOR_END: inner
        __syncthreads();
    }
    for (unsigned int i = 0; i < TM; ++i) {
        for (unsigned int j = 0; j < TN; ++j) {
            C[(row0 + thread_row * TM + i) * N + col0 + thread_col * TN + j] = sums[i][j];
        }
    }
}
// ANCHOR_END: kernel
