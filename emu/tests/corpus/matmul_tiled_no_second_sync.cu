// BROKEN(race): no barrier after the tile is used, so the next tile overwrites it — fixed in matmul_tiled.cu
// Thread mapping: one element of C per thread.
// Shared memory: two 16x16 float tiles.
// Launch: block (16,16), grid (ceil(N/16), ceil(N/16)).

#define TILE 16

extern "C" __global__ void matmul_tiled_no_second_sync(const float *A, const float *B, float *C, int N)
{
    __shared__ float As[TILE][TILE];
    __shared__ float Bs[TILE][TILE];
    int tx = threadIdx.x, ty = threadIdx.y;
    int row = blockIdx.y * TILE + ty;
    int col = blockIdx.x * TILE + tx;
    float acc = 0.0f;
    for (int t = 0; t < (N + TILE - 1) / TILE; ++t) {
        int ac = t * TILE + tx;
        int br = t * TILE + ty;
        As[ty][tx] = (row < N && ac < N) ? A[row * N + ac] : 0.0f; // BUG: overwrites a tile others may still read
        Bs[ty][tx] = (br < N && col < N) ? B[br * N + col] : 0.0f;
        __syncthreads();
        for (int k = 0; k < TILE; ++k) {
            acc += As[ty][k] * Bs[k][tx];
        }
    }
    if (row < N && col < N) {
        C[row * N + col] = acc;
    }
}
