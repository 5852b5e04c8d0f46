// BROKEN(host): the buffer is read back after cudaFree.
#include <cstdio>

__global__ void fill(int *x, int v) { x[threadIdx.x] = v; }

int main() {
    int *d_x;
    int h_x[32];
    cudaMalloc(&d_x, sizeof(h_x));
    fill<<<1, 32>>>(d_x, 7);
    cudaFree(d_x);
    cudaError_t e = cudaMemcpy(h_x, d_x, sizeof(h_x), cudaMemcpyDeviceToHost);  // BUG: freed above
    printf("%s\n", cudaGetErrorName(e));
    return 0;
}
