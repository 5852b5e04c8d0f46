// FIXED: vectorized loads: global and shared memory moved as float4 (16 bytes a thread), and A stored transposed so a thread's 8 values of A are contiguous too.
// Thread mapping: as 08_block_tiling_2d.cu: 256 threads compute a 128 × 128 tile of C, thread t an 8 × 8 block at block row t / 16, block column t % 16.
// Shared memory: the BK × BM = 8 × 128 tile of A transposed (As[k][m]) and the BK × BN = 8 × 128 tile of B (8 KiB), reloaded for every step of BK along K.
// Launch: block 256 threads; grid N / 128 × M / 128; M and N multiples of 128, K a multiple of 8 (the host refuses other sizes).

#define BM 128
#define BN 128
#define BK 8
#define TM 8
#define TN 8
#define THREADS (BM * BN / (TM * TN))

// ANCHOR: kernel
extern "C" __global__ void __launch_bounds__(THREADS)
matmul_vectorized(const float *A, const float *B, float *C, unsigned int M, unsigned int N, unsigned int K)
{
    __shared__ float4 As4[BK * BM / 4];
    __shared__ float4 Bs4[BK * BN / 4];
    float *As = reinterpret_cast<float *>(As4);
    unsigned int tid = threadIdx.x;
    unsigned int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;
    unsigned int thread_row = tid / (BN / TN), thread_col = tid % (BN / TN);
    // One float4 of each tile per thread: A's 128 rows × 2 float4s, B's 8 rows × 32 float4s.
    unsigned int a_row = tid / (BK / 4), a_col = tid % (BK / 4) * 4;
    unsigned int b_row = tid / (BN / 4), b_col4 = tid % (BN / 4);

    float sums[TM][TN] = {{0.0f}};
    float a_regs[TM], b_regs[TN];
    for (unsigned int k0 = 0; k0 < K; k0 += BK) {
        // ANCHOR: loads
        float4 a = *reinterpret_cast<const float4 *>(&A[(row0 + a_row) * K + k0 + a_col]);
        As[(a_col + 0) * BM + a_row] = a.x;
        As[(a_col + 1) * BM + a_row] = a.y;
        As[(a_col + 2) * BM + a_row] = a.z;
        As[(a_col + 3) * BM + a_row] = a.w;
        Bs4[b_row * (BN / 4) + b_col4] = *reinterpret_cast<const float4 *>(&B[(k0 + b_row) * N + col0 + b_col4 * 4]);
        // ANCHOR_END: loads
        __syncthreads();
        #pragma unroll
        for (unsigned int k = 0; k < BK; ++k) {
            // ANCHOR: inner
            for (unsigned int i = 0; i < TM; i += 4) {
                float4 v = As4[(k * BM + thread_row * TM + i) / 4];
                a_regs[i] = v.x, a_regs[i + 1] = v.y, a_regs[i + 2] = v.z, a_regs[i + 3] = v.w;
            }
            for (unsigned int j = 0; j < TN; j += 4) {
                float4 v = Bs4[(k * BN + thread_col * TN + j) / 4];
                b_regs[j] = v.x, b_regs[j + 1] = v.y, b_regs[j + 2] = v.z, b_regs[j + 3] = v.w;
            }
            // ANCHOR_END: inner
            for (unsigned int i = 0; i < TM; ++i) {
                for (unsigned int j = 0; j < TN; ++j) {
                    sums[i][j] += a_regs[i] * b_regs[j];
                }
            }
        }
        __syncthreads();
    }
    for (unsigned int i = 0; i < TM; ++i) {
        for (unsigned int j = 0; j < TN; j += 4) {
            float4 out = make_float4(sums[i][j], sums[i][j + 1], sums[i][j + 2], sums[i][j + 3]);
            *reinterpret_cast<float4 *>(&C[(row0 + thread_row * TM + i) * N + col0 + thread_col * TN + j]) = out;
        }
    }
}
// ANCHOR_END: kernel
