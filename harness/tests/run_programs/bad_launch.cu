// BROKEN(launch): a block of 2048 threads, which no GPU runs.
#include <cstdio>

__global__ void touch(int *x) { x[threadIdx.x] = 1; }

int main() {
    int *d_x;
    cudaMalloc(&d_x, 2048 * sizeof(int));
    touch<<<1, 2048>>>(d_x);  // BUG: at most 1024 threads a block
    cudaError_t e = cudaGetLastError();
    printf("%s: %s\n", cudaGetErrorName(e), cudaGetErrorString(e));
    return 0;
}
