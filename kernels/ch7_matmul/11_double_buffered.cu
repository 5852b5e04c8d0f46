// FIXED: double buffering: while a block multiplies one pair of tiles from shared memory, the next pair is already on its way from global memory into registers, then stored into a second pair of shared buffers: one barrier per step instead of two.
// Thread mapping: as 10_warp_tiling.cu: 256 threads = 8 warps in a 2 × 4 grid over a 128 × 128 tile of C, each thread four 4 × 4 blocks of its warp's 64 × 32.
// Shared memory: two buffers, each the BK × BM = 16 × 128 tile of A transposed and the BK × BN = 16 × 128 tile of B (32 KiB together).
// Launch: block 256 threads; grid N / 128 × M / 128; M and N multiples of 128, K a multiple of 16 (the host refuses other sizes).

#define BM 128
#define BN 128
#define BK 16
#define WM 64
#define WN 32
#define THREADS 256
#define TM 4
#define TN 4
#define WM_ITER (WM / (8 * TM))
#define WN_ITER (WN / (4 * TN))
#define A_LOADS (BM * BK / 4 / THREADS)
#define B_LOADS (BK * BN / 4 / THREADS)

// ANCHOR: kernel
extern "C" __global__ void __launch_bounds__(THREADS)
matmul_double_buffered(const float *A, const float *B, float *C, unsigned int M, unsigned int N, unsigned int K)
{
    __shared__ float4 As4[2][BK * BM / 4];
    __shared__ float4 Bs4[2][BK * BN / 4];
    unsigned int tid = threadIdx.x;
    unsigned int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;
    unsigned int warp = tid / 32, lane = tid % 32;
    unsigned int warp_row = warp / (BN / WN), warp_col = warp % (BN / WN);
    unsigned int lane_row = lane / 4, lane_col = lane % 4;

    float sums[WM_ITER * TM][WN_ITER * TN] = {{0.0f}};
    float a_regs[WM_ITER * TM], b_regs[WN_ITER * TN];
    float4 a_next[A_LOADS], b_next[B_LOADS];

    // ANCHOR: stage
    // Float4 number f of a tile: A's row f / (BK / 4), columns f % (BK / 4) · 4 …; B's row f / (BN / 4).
    auto load_tiles = [&](unsigned int k0) {
        for (unsigned int p = 0; p < A_LOADS; ++p) {
            unsigned int f = tid + p * THREADS;
            a_next[p] = *reinterpret_cast<const float4 *>(&A[(row0 + f / (BK / 4)) * K + k0 + f % (BK / 4) * 4]);
        }
        for (unsigned int p = 0; p < B_LOADS; ++p) {
            unsigned int f = tid + p * THREADS;
            b_next[p] = *reinterpret_cast<const float4 *>(&B[(k0 + f / (BN / 4)) * N + col0 + f % (BN / 4) * 4]);
        }
    };
    auto store_tiles = [&](unsigned int buffer) {
        float *As = reinterpret_cast<float *>(As4[buffer]);
        for (unsigned int p = 0; p < A_LOADS; ++p) {
            unsigned int f = tid + p * THREADS;
            unsigned int m = f / (BK / 4), k = f % (BK / 4) * 4;
            As[(k + 0) * BM + m] = a_next[p].x;
            As[(k + 1) * BM + m] = a_next[p].y;
            As[(k + 2) * BM + m] = a_next[p].z;
            As[(k + 3) * BM + m] = a_next[p].w;
        }
        for (unsigned int p = 0; p < B_LOADS; ++p) {
            Bs4[buffer][tid + p * THREADS] = b_next[p];
        }
    };
    // ANCHOR_END: stage

    load_tiles(0);
    store_tiles(0);
    __syncthreads();
    // ANCHOR: main_loop
    for (unsigned int k0 = 0; k0 < K; k0 += BK) {
        unsigned int buffer = (k0 / BK) % 2;
        bool more = k0 + BK < K;
        if (more) {
            load_tiles(k0 + BK);
        }
        #pragma unroll
        for (unsigned int k = 0; k < BK; ++k) {
            for (unsigned int s = 0; s < WM_ITER; ++s) {
                float4 v = As4[buffer][(k * BM + warp_row * WM + s * 8 * TM + lane_row * TM) / 4];
                a_regs[s * TM] = v.x, a_regs[s * TM + 1] = v.y, a_regs[s * TM + 2] = v.z, a_regs[s * TM + 3] = v.w;
            }
            for (unsigned int t = 0; t < WN_ITER; ++t) {
                float4 w = Bs4[buffer][(k * BN + warp_col * WN + t * 4 * TN + lane_col * TN) / 4];
                b_regs[t * TN] = w.x, b_regs[t * TN + 1] = w.y, b_regs[t * TN + 2] = w.z, b_regs[t * TN + 3] = w.w;
            }
            for (unsigned int i = 0; i < WM_ITER * TM; ++i) {
                for (unsigned int j = 0; j < WN_ITER * TN; ++j) {
                    sums[i][j] += a_regs[i] * b_regs[j];
                }
            }
        }
        // The other buffer was last read before the previous barrier, so it is free to fill.
        if (more) {
            store_tiles(buffer ^ 1);
        }
        __syncthreads();
    }
    // ANCHOR_END: main_loop
    for (unsigned int i = 0; i < WM_ITER * TM; ++i) {
        unsigned int row = row0 + warp_row * WM + (i / TM) * 8 * TM + lane_row * TM + i % TM;
        for (unsigned int t = 0; t < WN_ITER; ++t) {
            unsigned int col = col0 + warp_col * WN + t * 4 * TN + lane_col * TN;
            float4 out = make_float4(sums[i][t * TN], sums[i][t * TN + 1], sums[i][t * TN + 2], sums[i][t * TN + 3]);
            *reinterpret_cast<float4 *>(&C[row * N + col]) = out;
        }
    }
}
// ANCHOR_END: kernel
