// BROKEN(out of bounds): saxpy without the if (i < n) guard: the last block's spare threads read and write past n — fixed in saxpy.cu
// Build: nvcc -o saxpy_broken programs/ch1_map/saxpy_broken.cu
// Run: ./saxpy_broken 5000
// Expect: out-of-bounds at the BUG line: threads i = 5000 … 5119 (block 19) read x and y and write y past their 5000 floats
// Thread mapping: thread i = blockIdx.x · blockDim.x + threadIdx.x owns element i.
// Shared memory: none.
// Launch: ⌈n / 256⌉ blocks of 256 threads; in bounds only when 256 divides n, the first argument (5000 is not a multiple).

#include "../common.h"

#include <cmath>
#include <vector>

// A template, as a library would write it: main instantiates it for float.
template <typename T>
__global__ void saxpy(T a, const T *x, T *y, unsigned int n)
{
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    y[i] = a * x[i] + y[i]; // BUG: no if (i < n): the grid is rounded up to whole blocks, and threads past n touch memory past both arrays
}

int main(int argc, char **argv)
{
    const unsigned int n = size_arg(argc, argv, 1, 5000);
    const unsigned int threads = 256, blocks = (n + threads - 1) / threads;
    const float a = 2.5f;

    // Multiples of 1/256 in [-4, 4): every a·x + y is exact in float, so the printed sum is the
    // same on a GPU and on the emulator whether or not the compiler fuses the multiply-add.
    Lcg rng{1};
    std::vector<float> x(n), y(n);
    for (unsigned int i = 0; i < n; ++i) {
        x[i] = (float)((int)(rng.next() % 2048) - 1024) / 256.0f;
        y[i] = (float)((int)(rng.next() % 2048) - 1024) / 256.0f;
    }

    const size_t bytes = n * sizeof(float);
    float *d_x, *d_y;
    CUDA_CHECK(cudaMalloc(&d_x, bytes));
    CUDA_CHECK(cudaMalloc(&d_y, bytes));
    CUDA_CHECK(cudaMemcpy(d_x, x.data(), bytes, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(d_y, y.data(), bytes, cudaMemcpyHostToDevice));
    saxpy<float><<<blocks, threads>>>(a, d_x, d_y, n);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize());
    std::vector<float> result(n);
    CUDA_CHECK(cudaMemcpy(result.data(), d_y, bytes, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaFree(d_x));
    CUDA_CHECK(cudaFree(d_y));

    // fl(fl(a·x) + y) = a·x(1+δ1)(1+δ2) + y(1+δ2) with |δ| <= u = 2^-24, so it errs by at most
    // γ2·(|a·x| + |y|), γ2 = 2u / (1 - 2u) (Higham, Accuracy and Stability, §3.1); a fused
    // multiply-add rounds once and stays inside the same bound.
    const double u = std::ldexp(1.0, -24), gamma2 = 2 * u / (1 - 2 * u);
    double sum = 0;
    for (unsigned int i = 0; i < n; ++i) {
        double want = (double)a * x[i] + y[i];
        double bound = gamma2 * (std::fabs((double)a * x[i]) + std::fabs((double)y[i]));
        if (std::fabs(result[i] - want) > bound) {
            std::printf("saxpy over %u floats: y[%u] = %.9g, the CPU says %.9g\n", n, i, result[i], want);
            return 1;
        }
        sum += result[i];
    }
    std::printf("saxpy y = %.1f * x + y over %u floats: sum of y %.4f, every element matches the CPU\n", a,
                n, sum);
    return 0;
}
