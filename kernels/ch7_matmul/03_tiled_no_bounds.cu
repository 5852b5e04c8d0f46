// BROKEN(out of bounds): tiles read and write past the edges when N (or M, K) is not a multiple of TILE — fixed in 05_tiled.cu
// Thread mapping: one thread per element of C; block (TILE, TILE) computes one TILE × TILE tile of C.
// Shared memory: two TILE × TILE float tiles (2 KiB), one of A and one of B, reloaded for every step along K.
// Launch: block exactly TILE × TILE; grid ⌈N / TILE⌉ × ⌈M / TILE⌉. Right only when TILE divides M, N and K.

#define TILE 16

// ANCHOR: kernel
extern "C" __global__ void matmul_tiled_no_bounds(const float *A, const float *B, float *C,
                                                 unsigned int M, unsigned int N, unsigned int K)
{
    __shared__ float As[TILE][TILE];
    __shared__ float Bs[TILE][TILE];
    unsigned int tx = threadIdx.x, ty = threadIdx.y;
    unsigned int row = blockIdx.y * TILE + ty;
    unsigned int col = blockIdx.x * TILE + tx;
    float sum = 0.0f;
    for (unsigned int t = 0; t < (K + TILE - 1) / TILE; ++t) {
        // no bounds checks on the loads either: past the edge they read other rows or past the end
        As[ty][tx] = A[row * K + t * TILE + tx];
        Bs[ty][tx] = B[(t * TILE + ty) * N + col];
        __syncthreads();
        for (unsigned int k = 0; k < TILE; ++k) {
            sum += As[ty][k] * Bs[k][tx];
        }
        __syncthreads();
    }
    C[row * N + col] = sum; // BUG: no bounds check: past the last column this lands in the next row, past the last row outside C
}
// ANCHOR_END: kernel
