// Kernels in the style of GPUVerify's test suite: contracts (__requires), loop invariants in a
// for loop's condition before a comma, and __assert. A run cannot prove the contracts and
// invariants, so they compile to nothing; __assert is checked as assert is.
// Launch: 64 threads in one block, as the suite's "--blockDim=64 --gridDim=1" header says.
#include <cuda.h>

#define N 64

__global__ void rotate(int *A)
{
    __requires(blockDim.x == N);
    __shared__ int tile[N];
    tile[threadIdx.x] = A[threadIdx.x];
    __syncthreads();
    for (int i = 0; __invariant(i >= 0), __global_invariant(__implies(i > 0, true)), i < 4; i++) {
        A[threadIdx.x] = tile[(threadIdx.x + i) % N];
    }
    __assert(__implies(threadIdx.x == 0, A[0] >= 0));
}

__global__ void rotate_racy(int *A)
{
    __requires(blockDim.x == N);
    __shared__ int tile[N];
    tile[threadIdx.x] = A[threadIdx.x];
    A[threadIdx.x] = tile[(threadIdx.x + 1) % N]; // BUG: reads a neighbour's slot with no barrier
}

__global__ void all_positive(const int *A)
{
    __assert(A[threadIdx.x] > 0); // BUG: iota starts at 0
}
