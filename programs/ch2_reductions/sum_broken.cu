// BROKEN(race): the tree reduction without the barrier between its steps: a thread may add a partner's sum before the partner has finished it — fixed in sum.cu
// Build: nvcc -o sum_broken programs/ch2_reductions/sum_broken.cu
// Run: ./sum_broken 4096
// Expect: race at the BUG line: s[tid + stride] read by one thread while its owner may still be adding into it
// Thread mapping: grid-stride loop over x; then thread tid adds s[tid + stride] for stride = 128, 64, …, 1.
// Shared memory: one float per thread, 256 floats (1 KiB).
// Launch: min(⌈n / 256⌉, 64) blocks of 256 threads; n, the first argument, is any length.

#include "../common.h"

#include <algorithm>
#include <cmath>
#include <vector>

#define THREADS 256

__global__ void block_sums(const float *x, unsigned int n, float *sums)
{
    __shared__ float s[THREADS];
    unsigned int tid = threadIdx.x;
    float sum = 0.0f;
    for (unsigned int i = blockIdx.x * THREADS + tid; i < n; i += THREADS * gridDim.x) {
        sum += x[i];
    }
    s[tid] = sum;
    __syncthreads();
    for (unsigned int stride = THREADS / 2; stride > 0; stride /= 2) {
        if (tid < stride) {
            s[tid] += s[tid + stride]; // BUG: no __syncthreads() between steps: s[tid + stride] may not hold its sum yet
        }
    }
    if (tid == 0) {
        sums[blockIdx.x] = s[0];
    }
}

int main(int argc, char **argv)
{
    const unsigned int n = size_arg(argc, argv, 1, 4096);
    const unsigned int blocks = std::min((n + THREADS - 1) / THREADS, 64u);

    // Multiples of 1/256 in [-4, 4): at the default size every partial sum is exact in float,
    // so the printed sum is the same on a GPU, on the emulator and on the CPU.
    Lcg rng{2};
    std::vector<float> x(n);
    for (float &v : x) {
        v = (float)((int)(rng.next() % 2048) - 1024) / 256.0f;
    }

    float *d_x, *d_sums;
    CUDA_CHECK(cudaMalloc(&d_x, n * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_sums, blocks * sizeof(float)));
    CUDA_CHECK(cudaMemcpy(d_x, x.data(), n * sizeof(float), cudaMemcpyHostToDevice));
    block_sums<<<blocks, THREADS>>>(d_x, n, d_sums);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize());
    std::vector<float> sums(blocks);
    CUDA_CHECK(cudaMemcpy(sums.data(), d_sums, blocks * sizeof(float), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaFree(d_x));
    CUDA_CHECK(cudaFree(d_sums));

    float gpu = 0.0f;
    for (float s : sums) {
        gpu += s;
    }
    double want = 0, magnitude = 0;
    for (float v : x) {
        want += v;
        magnitude += std::fabs(v);
    }
    // Each x[i] passes through at most d = per_thread + 8 + blocks float additions (its thread's
    // loop, the 8 tree steps, the host loop), so the sum errs by at most γ(d)·Σ|x|,
    // γ(d) = d·u / (1 - d·u), u = 2^-24 (Higham, Accuracy and Stability, §4.2).
    const unsigned int per_thread = (n + blocks * THREADS - 1) / (blocks * THREADS);
    const double du = (per_thread + 8 + blocks) * std::ldexp(1.0, -24), bound = du / (1 - du) * magnitude;
    if (std::fabs(gpu - want) > bound) {
        std::printf("sum of %u floats: the GPU says %.6f, the CPU %.6f, more than %.3g apart\n", n, gpu, want,
                    bound);
        return 1;
    }
    std::printf("sum of %u floats: %.4f from %u block sums, matches the CPU\n", n, gpu, blocks);
    return 0;
}
