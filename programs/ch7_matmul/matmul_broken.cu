// BROKEN(out of bounds): matmul.cu with its tile loads guarded but not its store: when 16 does not divide n, the edge blocks write outside C — fixed in matmul.cu
// Build: nvcc -o matmul_broken programs/ch7_matmul/matmul_broken.cu
// Run: ./matmul_broken 72
// Expect: out-of-bounds at the BUG line (the last row of blocks stores past the end of C); racecheck may name the same line, as the last column of blocks stores onto the next row's elements
// Thread mapping: one thread per element of C: row = blockIdx.y · 16 + threadIdx.y, col = blockIdx.x · 16 + threadIdx.x.
// Shared memory: two 16 × 16 float tiles (2 KiB), one of A and one of B, reloaded for every step along k.
// Launch: ⌈n / 16⌉ × ⌈n / 16⌉ blocks of 16 × 16 threads; in bounds only when 16 divides n, the first argument (72 is not a multiple).

#include "../common.h"

#include <algorithm>
#include <cmath>
#include <vector>

#define TILE 16

__global__ void matmul_tiled(const float *A, const float *B, float *C, unsigned int n)
{
    __shared__ float As[TILE][TILE];
    __shared__ float Bs[TILE][TILE];
    unsigned int tx = threadIdx.x, ty = threadIdx.y;
    unsigned int row = blockIdx.y * TILE + ty, col = blockIdx.x * TILE + tx;
    float sum = 0.0f;
    for (unsigned int t = 0; t < n; t += TILE) {
        // Past the edges the tiles hold zeros, which add nothing to any sum.
        As[ty][tx] = row < n && t + tx < n ? A[row * n + t + tx] : 0.0f;
        Bs[ty][tx] = t + ty < n && col < n ? B[(t + ty) * n + col] : 0.0f;
        __syncthreads();
        for (unsigned int k = 0; k < TILE; ++k) {
            sum += As[ty][k] * Bs[k][tx];
        }
        // The next step's loads overwrite the tiles: everyone must be done reading them.
        __syncthreads();
    }
    C[row * n + col] = sum; // BUG: no if (row < n && col < n): past the last column this lands on the next row, past the last row outside C
}

int main(int argc, char **argv)
{
    const unsigned int n = size_arg(argc, argv, 1, 72);
    const size_t count = (size_t)n * n, bytes = count * sizeof(float);

    // Multiples of 1/16 in [-1, 1): products are multiples of 1/256 below 1, so every sum is
    // exact in float for n < 65536 and the printed total is the same on any device.
    Lcg rng{7};
    std::vector<float> A(count), B(count);
    for (size_t i = 0; i < count; ++i) {
        A[i] = (float)((int)(rng.next() % 32) - 16) / 16.0f;
        B[i] = (float)((int)(rng.next() % 32) - 16) / 16.0f;
    }

    float *d_A, *d_B, *d_C;
    CUDA_CHECK(cudaMalloc(&d_A, bytes));
    CUDA_CHECK(cudaMalloc(&d_B, bytes));
    CUDA_CHECK(cudaMalloc(&d_C, bytes));
    CUDA_CHECK(cudaMemcpy(d_A, A.data(), bytes, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(d_B, B.data(), bytes, cudaMemcpyHostToDevice));
    const dim3 block(TILE, TILE), grid((n + TILE - 1) / TILE, (n + TILE - 1) / TILE);
    matmul_tiled<<<grid, block>>>(d_A, d_B, d_C, n);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize());
    std::vector<float> C(count);
    CUDA_CHECK(cudaMemcpy(C.data(), d_C, bytes, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaFree(d_A));
    CUDA_CHECK(cudaFree(d_B));
    CUDA_CHECK(cudaFree(d_C));

    // Each C[i][j] is a dot product of length n, which errs by at most γ(n)·Σ_k |A[i][k]·B[k][j]|,
    // γ(n) = n·u / (1 - n·u), u = 2^-24 (Higham, Accuracy and Stability, §3.1).
    const double nu = n * std::ldexp(1.0, -24), gamma = nu / (1 - nu);
    double total = 0;
    std::vector<double> want(n), magnitude(n);
    for (unsigned int i = 0; i < n; ++i) {
        std::fill(want.begin(), want.end(), 0.0);
        std::fill(magnitude.begin(), magnitude.end(), 0.0);
        for (unsigned int k = 0; k < n; ++k) {
            const double a = A[(size_t)i * n + k];
            const float *b = &B[(size_t)k * n];
            for (unsigned int j = 0; j < n; ++j) {
                want[j] += a * b[j];
                magnitude[j] += std::fabs(a * b[j]);
            }
        }
        const float *c = &C[(size_t)i * n];
        for (unsigned int j = 0; j < n; ++j) {
            if (std::fabs(c[j] - want[j]) > gamma * magnitude[j]) {
                std::printf("matmul of %u x %u: C[%u][%u] = %.6f, the CPU says %.6f\n", n, n, i, j, c[j], want[j]);
                return 1;
            }
            total += c[j];
        }
    }
    std::printf("matmul of two %u x %u matrices in %u x %u tiles: sum of C %.4f, every element matches the CPU\n", n,
                n, TILE, TILE, total);
    return 0;
}
