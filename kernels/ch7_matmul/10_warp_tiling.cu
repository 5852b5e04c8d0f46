// FIXED: warp tiling: each warp owns a 64 × 32 piece of the block's tile and each thread four 4 × 4 blocks spread over it, so a warp's shared-memory reads hit few distinct addresses and no bank twice.
// Thread mapping: 256 threads = 8 warps in a 2 × 4 grid over a 128 × 128 tile of C; lane l sits at row l / 4, column l % 4 of its warp and computes rows w_row·64 + s·32 + (l / 4)·4 … +3, columns w_col·32 + t·16 + (l % 4)·4 … +3 for s, t in {0, 1}.
// Shared memory: the BK × BM = 8 × 128 tile of A transposed and the BK × BN = 8 × 128 tile of B (8 KiB), reloaded for every step of BK along K.
// Launch: block 256 threads; grid N / 128 × M / 128; M and N multiples of 128, K a multiple of 8 (the host refuses other sizes).

#define BM 128
#define BN 128
#define BK 8
#define WM 64
#define WN 32
#define TM 4
#define TN 4
#define THREADS 256

// ANCHOR: kernel
extern "C" __global__ void __launch_bounds__(THREADS)
matmul_warp_tiling(const float *A, const float *B, float *C, unsigned int M, unsigned int N, unsigned int K)
{
    __shared__ float4 As4[BK * BM / 4];
    __shared__ float4 Bs4[BK * BN / 4];
    float *As = reinterpret_cast<float *>(As4);
    unsigned int tid = threadIdx.x;
    unsigned int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;
    // ANCHOR: mapping
    unsigned int warp = tid / 32, lane = tid % 32;
    unsigned int warp_row = warp / (BN / WN), warp_col = warp % (BN / WN);
    unsigned int lane_row = lane / 4, lane_col = lane % 4;
    // This thread's 4 × 4 blocks start at these rows and columns of the tile.
    unsigned int rows[2] = {warp_row * WM + lane_row * TM, warp_row * WM + WM / 2 + lane_row * TM};
    unsigned int cols[2] = {warp_col * WN + lane_col * TN, warp_col * WN + WN / 2 + lane_col * TN};
    // ANCHOR_END: mapping
    unsigned int a_row = tid / (BK / 4), a_col = tid % (BK / 4) * 4;
    unsigned int b_row = tid / (BN / 4), b_col4 = tid % (BN / 4);

    float sums[2 * TM][2 * TN] = {{0.0f}};
    float a_regs[2 * TM], b_regs[2 * TN];
    for (unsigned int k0 = 0; k0 < K; k0 += BK) {
        float4 a = *reinterpret_cast<const float4 *>(&A[(row0 + a_row) * K + k0 + a_col]);
        As[(a_col + 0) * BM + a_row] = a.x;
        As[(a_col + 1) * BM + a_row] = a.y;
        As[(a_col + 2) * BM + a_row] = a.z;
        As[(a_col + 3) * BM + a_row] = a.w;
        Bs4[b_row * (BN / 4) + b_col4] = *reinterpret_cast<const float4 *>(&B[(k0 + b_row) * N + col0 + b_col4 * 4]);
        __syncthreads();
        // ANCHOR: inner
        #pragma unroll
        for (unsigned int k = 0; k < BK; ++k) {
            for (unsigned int s = 0; s < 2; ++s) {
                float4 v = As4[(k * BM + rows[s]) / 4];
                a_regs[s * TM] = v.x, a_regs[s * TM + 1] = v.y, a_regs[s * TM + 2] = v.z, a_regs[s * TM + 3] = v.w;
                float4 w = Bs4[(k * BN + cols[s]) / 4];
                b_regs[s * TN] = w.x, b_regs[s * TN + 1] = w.y, b_regs[s * TN + 2] = w.z, b_regs[s * TN + 3] = w.w;
            }
            for (unsigned int i = 0; i < 2 * TM; ++i) {
                for (unsigned int j = 0; j < 2 * TN; ++j) {
                    sums[i][j] += a_regs[i] * b_regs[j];
                }
            }
        }
        // ANCHOR_END: inner
        __syncthreads();
    }
    for (unsigned int i = 0; i < 2 * TM; ++i) {
        unsigned int row = row0 + rows[i / TM] + i % TM;
        for (unsigned int t = 0; t < 2; ++t) {
            float4 out = make_float4(sums[i][t * TN], sums[i][t * TN + 1], sums[i][t * TN + 2], sums[i][t * TN + 3]);
            *reinterpret_cast<float4 *>(&C[row * N + col0 + cols[t]]) = out;
        }
    }
}
// ANCHOR_END: kernel
