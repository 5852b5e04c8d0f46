// FIXED: naive matmul: one thread per element of C, each reading a row of A and a column of B.
// Thread mapping: x → column of C, y → row of C; threads past the edge of C do nothing.
// Shared memory: none.
// Launch: any 2D block; grid ⌈N / blockDim.x⌉ × ⌈M / blockDim.y⌉. Row-major A (M×K), B (K×N), C (M×N).

// ANCHOR: kernel
extern "C" __global__ void matmul_naive(const float *A, const float *B, float *C,
                                       unsigned int M, unsigned int N, unsigned int K)
{
    unsigned int row = blockIdx.y * blockDim.y + threadIdx.y;
    unsigned int col = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < M && col < N) {
        float sum = 0.0f;
        for (unsigned int k = 0; k < K; ++k) {
            sum += A[row * K + k] * B[k * N + col];
        }
        C[row * N + col] = sum;
    }
}
// ANCHOR_END: kernel
