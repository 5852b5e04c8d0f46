// FIXED: managed memory read on the host after the kernel, once the host has synchronized.
#include <cstdio>

__global__ void square(int *x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = i * i;
}

int main() {
    const int n = 64;
    int *x;
    cudaMallocManaged(&x, n * sizeof(int));
    for (int i = 0; i < n; i++) x[i] = -1;
    square<<<2, 32>>>(x, n);
    cudaDeviceSynchronize();
    long sum = 0;
    for (int i = 0; i < n; i++) sum += x[i];
    printf("sum of squares below %d: %ld\n", n, sum);
    cudaFree(x);
    return 0;
}
