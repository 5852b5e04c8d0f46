// FIXED: tiled matmul with a 2 × 2 block of C per thread: a 16 × 16 block computes a 32 × 32 tile of C from 32 × 16 and 16 × 32 tiles of A and B, so every value read from shared memory feeds two multiply-adds from a register.
// Thread mapping: thread (tx, ty) computes C at rows (row0, row0 + 16) × columns (col0, col0 + 16), row0 = 32 · blockIdx.y + ty,
//                 col0 = 32 · blockIdx.x + tx; it loads two elements of each tile per step along K.
// Shared memory: two 32 × 16 float tiles (4 KiB), As and Bs (Bs stored as 16 rows of 32), reloaded for every step along K.
// Launch: block exactly 16 × 16; grid ⌈N / 32⌉ × ⌈M / 32⌉; any M, N, K (tiles are zero-padded at the edges).

#define TILE 16
#define OUT (2 * TILE)

// ANCHOR: kernel
extern "C" __global__ void matmul_tiled_2x2(const float *A, const float *B, float *C,
                                           unsigned int M, unsigned int N, unsigned int K)
{
    __shared__ float As[OUT][TILE];
    __shared__ float Bs[TILE][OUT];
    unsigned int tx = threadIdx.x, ty = threadIdx.y;
    unsigned int row0 = blockIdx.y * OUT + ty, row1 = row0 + TILE;
    unsigned int col0 = blockIdx.x * OUT + tx, col1 = col0 + TILE;
    float c00 = 0.0f, c01 = 0.0f, c10 = 0.0f, c11 = 0.0f;
    for (unsigned int t = 0; t < (K + TILE - 1) / TILE; ++t) {
        unsigned int a_col = t * TILE + tx;
        unsigned int b_row = t * TILE + ty;
        As[ty][tx] = (row0 < M && a_col < K) ? A[row0 * K + a_col] : 0.0f;
        As[ty + TILE][tx] = (row1 < M && a_col < K) ? A[row1 * K + a_col] : 0.0f;
        Bs[ty][tx] = (b_row < K && col0 < N) ? B[b_row * N + col0] : 0.0f;
        Bs[ty][tx + TILE] = (b_row < K && col1 < N) ? B[b_row * N + col1] : 0.0f;
        __syncthreads();
        for (unsigned int k = 0; k < TILE; ++k) {
            // Two values of A and two of B in registers make four multiply-adds.
            float a0 = As[ty][k], a1 = As[ty + TILE][k];
            float b0 = Bs[k][tx], b1 = Bs[k][tx + TILE];
            c00 += a0 * b0;
            c01 += a0 * b1;
            c10 += a1 * b0;
            c11 += a1 * b1;
        }
        __syncthreads();
    }
    if (row0 < M && col0 < N) {
        C[row0 * N + col0] = c00;
    }
    if (row0 < M && col1 < N) {
        C[row0 * N + col1] = c01;
    }
    if (row1 < M && col0 < N) {
        C[row1 * N + col0] = c10;
    }
    if (row1 < M && col1 < N) {
        C[row1 * N + col1] = c11;
    }
}
// ANCHOR_END: kernel
