// FIXED: the tiled kernel of 05_tiled.cu, unchanged, run by the multi-stream pipeline on one chunk of rows of A and C per launch.
// Thread mapping: one thread per element of the chunk of C; block (TILE, TILE) computes one TILE × TILE tile.
// Shared memory: two TILE × TILE float tiles (2 KiB), one of A and one of B, reloaded for every step along K.
// Launch: block exactly TILE × TILE; grid ⌈N / TILE⌉ × ⌈rows / TILE⌉ per chunk, on the chunk's stream, between its copy in and its copy out.

#define TILE 16

// ANCHOR: kernel
extern "C" __global__ void matmul_pipeline_chunk(const float *A_rows, const float *B, float *C_rows,
                                                unsigned int rows, unsigned int N, unsigned int K)
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
        As[ty][tx] = (row < rows && a_col < K) ? A_rows[row * K + a_col] : 0.0f;
        Bs[ty][tx] = (b_row < K && col < N) ? B[b_row * N + col] : 0.0f;
        __syncthreads();
        for (unsigned int k = 0; k < TILE; ++k) {
            sum += As[ty][k] * Bs[k][tx];
        }
        __syncthreads();
    }
    if (row < rows && col < N) {
        C_rows[row * N + col] = sum;
    }
}
// ANCHOR_END: kernel
