// BROKEN(race): no barrier after using a tile, so the next tile overwrites it while others still read it — fixed in 05_tiled.cu
// Thread mapping: one thread per element of C; block (TILE, TILE) computes one TILE × TILE tile of C.
// Shared memory: two TILE × TILE float tiles (2 KiB), one of A and one of B, reloaded for every step along K.
// Launch: block exactly TILE × TILE; grid ⌈N / TILE⌉ × ⌈M / TILE⌉; any M, N, K.
#ifndef TILE // the book's player traces it with -D TILE=8: two warps stay readable
#define TILE 16
#endif
// ANCHOR: kernel
extern "C" __global__ void matmul_tiled_missing_second_sync(const float *A, const float *B, float *C,
                                                           unsigned int M, unsigned int N, unsigned int K)
{
    __shared__ float As[TILE][TILE];
    __shared__ float Bs[TILE][TILE];
    unsigned int tx = threadIdx.x, ty = threadIdx.y;
    unsigned int row = blockIdx.y * TILE + ty;
    unsigned int col = blockIdx.x * TILE + tx;
    float sum = 0.0f;
    for (unsigned int t = 0; t < (K + TILE - 1) / TILE; ++t) {
        unsigned int a_col = t * TILE + tx;
        unsigned int b_row = t * TILE + ty;
        As[ty][tx] = (row < M && a_col < K) ? A[row * K + a_col] : 0.0f;
        Bs[ty][tx] = (b_row < K && col < N) ? B[b_row * N + col] : 0.0f; // BUG: no barrier at the end of the loop: a warp that runs ahead overwrites rows of Bs that other warps are still reading
        __syncthreads();
        for (unsigned int k = 0; k < TILE; ++k) {
            sum += As[ty][k] * Bs[k][tx];
        }
    }
    if (row < M && col < N) {
        C[row * N + col] = sum;
    }
}
// ANCHOR_END: kernel
