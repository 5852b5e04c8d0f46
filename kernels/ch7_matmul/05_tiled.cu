// FIXED: tiled matmul: each block stages TILE × TILE tiles of A and B in shared memory and reuses every value TILE times.
// Thread mapping: one thread per element of C; block (TILE, TILE) computes one TILE × TILE tile of C.
// Shared memory: two TILE × TILE float tiles (2 KiB), one of A and one of B, reloaded for every step along K.
// Launch: block exactly TILE × TILE; grid ⌈N / TILE⌉ × ⌈M / TILE⌉; any M, N, K (tiles are zero-padded at the edges).

#define TILE 16

// ANCHOR: kernel
extern "C" __global__ void matmul_tiled(const float *A, const float *B, float *C,
                                       unsigned int M, unsigned int N, unsigned int K)
{
    __shared__ float As[TILE][TILE];
    __shared__ float Bs[TILE][TILE];
    unsigned int tx = threadIdx.x, ty = threadIdx.y;
    unsigned int row = blockIdx.y * TILE + ty;
    unsigned int col = blockIdx.x * TILE + tx;
    float sum = 0.0f;
    for (unsigned int t = 0; t < (K + TILE - 1) / TILE; ++t) {
        // ANCHOR: loads
        unsigned int a_col = t * TILE + tx;
        unsigned int b_row = t * TILE + ty;
        As[ty][tx] = (row < M && a_col < K) ? A[row * K + a_col] : 0.0f;
        Bs[ty][tx] = (b_row < K && col < N) ? B[b_row * N + col] : 0.0f;
        // ANCHOR_END: loads
        __syncthreads();
        for (unsigned int k = 0; k < TILE; ++k) {
            sum += As[ty][k] * Bs[k][tx];
        }
        // ANCHOR: second_sync
        __syncthreads();
        // ANCHOR_END: second_sync
    }
    if (row < M && col < N) {
        C[row * N + col] = sum;
    }
}
// ANCHOR_END: kernel
