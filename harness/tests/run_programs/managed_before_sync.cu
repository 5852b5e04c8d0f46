// BROKEN(host): the host reads managed memory that a kernel it launched may still be writing.
#include <cstdio>

__global__ void square(int *x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = i * i;
}

int main() {
    const int n = 64;
    int *x;
    cudaMallocManaged(&x, n * sizeof(int));
    square<<<2, 32>>>(x, n);
    int last = x[n - 1];  // BUG: no cudaDeviceSynchronize() before the host reads x
    cudaDeviceSynchronize();
    printf("x[%d] = %d, then %d\n", n - 1, last, x[n - 1]);
    cudaFree(x);
    return 0;
}
