// BROKEN(host): dot.cu reading its float result into a double on the host: the copy back takes 8 bytes from a 4-byte allocation — fixed in dot.cu
// Build: nvcc -o dot_broken programs/ch5_mutex_dot/dot_broken.cu
// Run: ./dot_broken 4096
// Expect: host: copy past the end of an allocation at the BUG line (8 bytes read from d_c, which holds 4); the kernels are clean
// Thread mapping: grid-stride loop over a[i]·b[i]; a shared-memory tree per block; thread 0 of each block takes the lock.
// Shared memory: one float per thread, 256 floats (1 KiB).
// Launch: min(⌈n / 256⌉, 32) blocks of 256 threads; *c and *mutex start at 0; n, the first argument, is the length.

#include "../common.h"

#include <algorithm>
#include <cmath>
#include <vector>

#define THREADS 256

struct Lock {
    int *mutex;

    __device__ void lock()
    {
        while (atomicCAS(mutex, 0, 1) != 0) {
        }
        // Without the fence, the read of *c below could see memory as it was before the last holder's write.
        __threadfence();
    }

    __device__ void unlock()
    {
        // Make the write to *c visible to every block before the next holder can get in.
        __threadfence();
        atomicExch(mutex, 0);
    }
};

__global__ void dot(const float *a, const float *b, unsigned int n, float *c, int *mutex)
{
    __shared__ float s[THREADS];
    unsigned int tid = threadIdx.x;
    float sum = 0.0f;
    for (unsigned int i = blockIdx.x * THREADS + tid; i < n; i += THREADS * gridDim.x) {
        sum += a[i] * b[i];
    }
    s[tid] = sum;
    __syncthreads();
    for (unsigned int stride = THREADS / 2; stride > 0; stride /= 2) {
        if (tid < stride) {
            s[tid] += s[tid + stride];
        }
        __syncthreads();
    }
    // One thread per block spins, never two of the same warp, so the holder is never starved by its own warp.
    if (tid == 0) {
        Lock block_lock{mutex};
        block_lock.lock();
        *c += s[0];
        block_lock.unlock();
    }
}

int main(int argc, char **argv)
{
    const unsigned int n = size_arg(argc, argv, 1, 4096);
    const unsigned int blocks = std::min((n + THREADS - 1) / THREADS, 32u);

    // Multiples of 1/16 in [-2, 2): at the default size every product and partial sum is exact in
    // float, so the printed result does not depend on the order in which blocks take the lock.
    Lcg rng{5};
    std::vector<float> a(n), b(n);
    for (unsigned int i = 0; i < n; ++i) {
        a[i] = (float)((int)(rng.next() % 64) - 32) / 16.0f;
        b[i] = (float)((int)(rng.next() % 64) - 32) / 16.0f;
    }

    float *d_a, *d_b, *d_c;
    int *d_mutex;
    CUDA_CHECK(cudaMalloc(&d_a, n * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_b, n * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_c, sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_mutex, sizeof(int)));
    CUDA_CHECK(cudaMemcpy(d_a, a.data(), n * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(d_b, b.data(), n * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemset(d_c, 0, sizeof(float)));
    CUDA_CHECK(cudaMemset(d_mutex, 0, sizeof(int)));
    dot<<<blocks, THREADS>>>(d_a, d_b, n, d_c, d_mutex);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize());
    double gpu = 0.0;
    CUDA_CHECK(cudaMemcpy(&gpu, d_c, sizeof(gpu), cudaMemcpyDeviceToHost)); // BUG: sizeof(gpu) is 8 now that gpu is a double, and d_c holds one 4-byte float
    CUDA_CHECK(cudaFree(d_a));
    CUDA_CHECK(cudaFree(d_b));
    CUDA_CHECK(cudaFree(d_c));
    CUDA_CHECK(cudaFree(d_mutex));

    // Products of two floats are exact in double, so this is the true dot product up to double rounding.
    double want = 0, magnitude = 0;
    for (unsigned int i = 0; i < n; ++i) {
        want += (double)a[i] * b[i];
        magnitude += std::fabs((double)a[i] * b[i]);
    }
    // Each product is rounded once, then passes through at most per_thread + 8 + blocks additions
    // (its thread's loop, the 8 tree steps, the additions to *c), so with d = per_thread + 9 + blocks
    // the result errs by at most γ(d)·Σ|a·b|, γ(d) = d·u / (1 - d·u), u = 2^-24 (Higham, §3.1).
    const unsigned int per_thread = (n + blocks * THREADS - 1) / (blocks * THREADS);
    const double du = (per_thread + 9 + blocks) * std::ldexp(1.0, -24), bound = du / (1 - du) * magnitude;
    if (std::fabs(gpu - want) > bound) {
        std::printf("dot of %u pairs: the GPU says %.6f, the CPU %.6f, more than %.3g apart\n", n, gpu, want, bound);
        return 1;
    }
    std::printf("dot of %u pairs: %.4f, %u blocks added under one lock, matches the CPU\n", n, gpu, blocks);
    return 0;
}
