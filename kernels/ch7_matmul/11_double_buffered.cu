// FIXED: double buffering: while a block multiplies one pair of tiles from shared memory, the next pair is already on its way from global memory into registers, then stored into a second pair of shared buffers: one barrier per step instead of two.
// Thread mapping: as 10_warp_tiling.cu: 256 threads = 8 warps in a 2 × 4 grid over a 128 × 128 tile of C, each thread four 4 × 4 blocks of its warp's 64 × 32.
// Shared memory: two buffers, each the BK × BM = 8 × 128 tile of A transposed (rows padded by 4 floats) and the BK × BN = 8 × 128 tile of B (16.5 KiB together).
// Launch: block 256 threads; grid N / 128 × M / 128; M and N multiples of 128, K a multiple of 8 (the host refuses other sizes).

#define BM 128
#define BN 128
#define BK 8
#define WM 64
#define WN 32
#define THREADS 256
#define TM 4
#define TN 4
#define PAD 4

#define WM_ITER (WM / (8 * TM))
#define WN_ITER (WN / (4 * TN))
#define A_LOADS (BM * BK / 4 / THREADS)
#define B_LOADS (BK * BN / 4 / THREADS)
#define AS_ROW (BM + PAD)

// ANCHOR: kernel
extern "C" __global__ void __launch_bounds__(THREADS)
matmul_double_buffered(const float *A, const float *B, float *C, unsigned int M, unsigned int N, unsigned int K)
{
    __shared__ float4 As4[2][BK * AS_ROW / 4];
    __shared__ float4 Bs4[2][BK * BN / 4];
    unsigned int tid = threadIdx.x;
    unsigned int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;
    unsigned int warp = tid / 32, lane = tid % 32;
    unsigned int warp_row = warp / (BN / WN), warp_col = warp % (BN / WN);
    unsigned int lane_row = lane / 4, lane_col = lane % 4;
    unsigned int a_frag = (warp_row * WM + lane_row * TM) / 4;
    unsigned int b_frag = (warp_col * WN + lane_col * TN) / 4;

    // Float4 number f of a tile: A's row f / (BK / 4), columns f % (BK / 4) · 4 …; B's row f / (BN / 4).
    const float *a_src[A_LOADS];
    const float *b_src[B_LOADS];
    unsigned int a_dst[A_LOADS];
    #pragma unroll
    for (unsigned int p = 0; p < A_LOADS; ++p) {
        unsigned int f = tid + p * THREADS;
        a_src[p] = &A[(row0 + f / (BK / 4)) * K + f % (BK / 4) * 4];
        a_dst[p] = f % (BK / 4) * 4 * AS_ROW + f / (BK / 4);
    }
    #pragma unroll
    for (unsigned int p = 0; p < B_LOADS; ++p) {
        unsigned int f = tid + p * THREADS;
        b_src[p] = &B[f / (BN / 4) * N + col0 + f % (BN / 4) * 4];
    }
    // ANCHOR: stage
    float4 a_next[A_LOADS], b_next[B_LOADS];
    auto load_tiles = [&](unsigned int k0) {
        #pragma unroll
        for (unsigned int p = 0; p < A_LOADS; ++p) {
            a_next[p] = *reinterpret_cast<const float4 *>(a_src[p] + k0);
        }
        #pragma unroll
        for (unsigned int p = 0; p < B_LOADS; ++p) {
            b_next[p] = *reinterpret_cast<const float4 *>(b_src[p] + k0 * N);
        }
    };
    auto store_tiles = [&](unsigned int buffer) {
        float *As = reinterpret_cast<float *>(As4[buffer]);
        #pragma unroll
        for (unsigned int p = 0; p < A_LOADS; ++p) {
            As[a_dst[p] + 0 * AS_ROW] = a_next[p].x;
            As[a_dst[p] + 1 * AS_ROW] = a_next[p].y;
            As[a_dst[p] + 2 * AS_ROW] = a_next[p].z;
            As[a_dst[p] + 3 * AS_ROW] = a_next[p].w;
        }
        #pragma unroll
        for (unsigned int p = 0; p < B_LOADS; ++p) {
            Bs4[buffer][tid + p * THREADS] = b_next[p];
        }
    };
    // ANCHOR_END: stage

    float sums[WM_ITER * TM][WN_ITER * TN] = {{0.0f}};
    load_tiles(0);
    store_tiles(0);
    __syncthreads();
    // ANCHOR: main_loop
    for (unsigned int k0 = 0; k0 < K; k0 += BK) {
        unsigned int buffer = k0 / BK % 2;
        bool more = k0 + BK < K;
        if (more) {
            load_tiles(k0 + BK);
        }
        const float4 *a_base = &As4[buffer][a_frag];
        const float4 *b_base = &Bs4[buffer][b_frag];
        #pragma unroll
        for (unsigned int k = 0; k < BK; ++k) {
            float a_regs[WM_ITER * TM], b_regs[WN_ITER * TN];
            #pragma unroll
            for (unsigned int s = 0; s < WM_ITER; ++s) {
                float4 v = a_base[k * (AS_ROW / 4) + s * 8 * TM / 4];
                a_regs[s * TM] = v.x, a_regs[s * TM + 1] = v.y, a_regs[s * TM + 2] = v.z, a_regs[s * TM + 3] = v.w;
            }
            #pragma unroll
            for (unsigned int t = 0; t < WN_ITER; ++t) {
                float4 w = b_base[k * (BN / 4) + t * 4 * TN / 4];
                b_regs[t * TN] = w.x, b_regs[t * TN + 1] = w.y, b_regs[t * TN + 2] = w.z, b_regs[t * TN + 3] = w.w;
            }
            #pragma unroll
            for (unsigned int i = 0; i < WM_ITER * TM; ++i) {
                #pragma unroll
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
    #pragma unroll
    for (unsigned int i = 0; i < WM_ITER * TM; ++i) {
        unsigned int row = row0 + warp_row * WM + i / TM * 8 * TM + lane_row * TM + i % TM;
        #pragma unroll
        for (unsigned int t = 0; t < WN_ITER; ++t) {
            unsigned int col = col0 + warp_col * WN + t * 4 * TN + lane_col * TN;
            float4 out = make_float4(sums[i][t * TN], sums[i][t * TN + 1], sums[i][t * TN + 2], sums[i][t * TN + 3]);
            *reinterpret_cast<float4 *>(&C[row * N + col]) = out;
        }
    }
}
// ANCHOR_END: kernel
