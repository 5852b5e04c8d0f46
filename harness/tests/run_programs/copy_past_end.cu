// BROKEN(host): the copy back asks for more bytes than were allocated.
#include <cstdio>

__global__ void iota(int *x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = i;
}

int main() {
    const int n = 100;
    int *d_x;
    int h_x[128];
    cudaMalloc(&d_x, n * sizeof(int));
    iota<<<4, 32>>>(d_x, n);
    cudaError_t e = cudaMemcpy(h_x, d_x, 128 * sizeof(int), cudaMemcpyDeviceToHost);  // BUG: 128, not n
    printf("%s\n", cudaGetErrorName(e));
    cudaFree(d_x);
    return 0;
}
