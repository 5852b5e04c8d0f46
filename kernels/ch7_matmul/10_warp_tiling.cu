// FIXED: warp tiling: each warp owns a 64 × 32 piece of the block's tile and each thread four 4 × 4 blocks spread over it, so a warp's float4 reads of shared memory touch few addresses and no bank twice; every index is computed once, before the loop.
// Thread mapping: 256 threads = 8 warps in a 2 × 4 grid over a 128 × 128 tile of C; lane l of warp (w_row, w_col) computes rows w_row·64 + s·32 + (l / 4)·4 … +3 and columns w_col·32 + t·16 + (l % 4)·4 … +3, for s and t in {0, 1}.
// Shared memory: the BK × BM = 8 × 128 tile of A transposed, each row padded by PAD = 4 floats so the transposing stores fall in 32 different banks, and the BK × BN = 8 × 128 tile of B (8.2 KiB).
// Launch: block 256 threads; grid N / 128 × M / 128; M and N multiples of 128, K a multiple of 8 (the host refuses other sizes).

#define BM 128
#define BN 128
#define BK 8
#define WM 64
#define WN 32
#define TM 4
#define TN 4
#define PAD 4
#define AS_ROW (BM + PAD)
#define THREADS 256

// ANCHOR: kernel
extern "C" __global__ void __launch_bounds__(THREADS)
matmul_warp_tiling(const float *A, const float *B, float *C, unsigned int M, unsigned int N, unsigned int K)
{
    __shared__ float4 As4[BK * AS_ROW / 4];
    __shared__ float4 Bs4[BK * BN / 4];
    float *As = reinterpret_cast<float *>(As4);
    unsigned int tid = threadIdx.x;
    unsigned int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;
    // ANCHOR: mapping
    unsigned int warp = tid / 32, lane = tid % 32;
    unsigned int warp_row = warp / (BN / WN), warp_col = warp % (BN / WN);
    unsigned int lane_row = lane / 4, lane_col = lane % 4;
    // ANCHOR_END: mapping
    // ANCHOR: pointers
    // Computed once: inside the loop every access is one of these plus a constant.
    unsigned int a_row = tid / (BK / 4), a_col = tid % (BK / 4) * 4;
    const float *a_src = &A[(row0 + a_row) * K + a_col];
    const float *b_src = &B[tid / (BN / 4) * N + col0 + tid % (BN / 4) * 4];
    float *a_dst = &As[a_col * AS_ROW + a_row];
    const float4 *a_frag = &As4[(warp_row * WM + lane_row * TM) / 4];
    const float4 *b_frag = &Bs4[(warp_col * WN + lane_col * TN) / 4];
    // ANCHOR_END: pointers

    float sums[2 * TM][2 * TN] = {{0.0f}};
    for (unsigned int k0 = 0; k0 < K; k0 += BK) {
        float4 a = *reinterpret_cast<const float4 *>(a_src + k0);
        a_dst[0 * AS_ROW] = a.x;
        a_dst[1 * AS_ROW] = a.y;
        a_dst[2 * AS_ROW] = a.z;
        a_dst[3 * AS_ROW] = a.w;
        Bs4[tid] = *reinterpret_cast<const float4 *>(b_src + k0 * N);
        __syncthreads();
        // ANCHOR: inner
        #pragma unroll
        for (unsigned int k = 0; k < BK; ++k) {
            float a_regs[2 * TM], b_regs[2 * TN];
            #pragma unroll
            for (unsigned int s = 0; s < 2; ++s) {
                // 32 rows of A and 16 columns of B separate a thread's two 4 × 4 blocks.
                float4 v = a_frag[k * (AS_ROW / 4) + s * 32 / 4];
                a_regs[s * TM] = v.x, a_regs[s * TM + 1] = v.y, a_regs[s * TM + 2] = v.z, a_regs[s * TM + 3] = v.w;
                float4 w = b_frag[k * (BN / 4) + s * 16 / 4];
                b_regs[s * TN] = w.x, b_regs[s * TN + 1] = w.y, b_regs[s * TN + 2] = w.z, b_regs[s * TN + 3] = w.w;
            }
            #pragma unroll
            for (unsigned int i = 0; i < 2 * TM; ++i) {
                #pragma unroll
                for (unsigned int j = 0; j < 2 * TN; ++j) {
                    sums[i][j] += a_regs[i] * b_regs[j];
                }
            }
        }
        // ANCHOR_END: inner
        __syncthreads();
    }
    #pragma unroll
    for (unsigned int i = 0; i < 2 * TM; ++i) {
        unsigned int row = row0 + warp_row * WM + i / TM * 32 + lane_row * TM + i % TM;
        #pragma unroll
        for (unsigned int t = 0; t < 2; ++t) {
            unsigned int col = col0 + warp_col * WN + t * 16 + lane_col * TN;
            float4 out = make_float4(sums[i][t * TN], sums[i][t * TN + 1], sums[i][t * TN + 2], sums[i][t * TN + 3]);
            *reinterpret_cast<float4 *>(&C[row * N + col]) = out;
        }
    }
}
// ANCHOR_END: kernel
