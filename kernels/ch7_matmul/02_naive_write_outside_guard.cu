// BROKEN(out of bounds): writes C outside its bounds check — fixed in 01_naive.cu
// Thread mapping: x → column of C, y → row of C; the grid overhangs C whenever a block does not divide it.
// Shared memory: none.
// Launch: any 2D block; grid ⌈N / blockDim.x⌉ × ⌈M / blockDim.y⌉. Row-major A (M×K), B (K×N), C (M×N).

// ANCHOR: kernel
extern "C" __global__ void matmul_naive_write_outside_guard(const float *A, const float *B, float *C,
                                                           unsigned int M, unsigned int N, unsigned int K)
{
    unsigned int row = blockIdx.y * blockDim.y + threadIdx.y;
    unsigned int col = blockIdx.x * blockDim.x + threadIdx.x;
    float sum = 0.0f;
    if (row < M && col < N) {
        for (unsigned int k = 0; k < K; ++k) {
            sum += A[row * K + k] * B[k * N + col];
        }
    }
    C[row * N + col] = sum; // BUG: outside the check: past the last column this is the next row's element, past the last row it is past the end of C
}
// ANCHOR_END: kernel
