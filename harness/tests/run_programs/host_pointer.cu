// BROKEN(host): a host array handed to a kernel — the kernel cannot reach it.
#include <cstdio>
#include <cstdlib>

__global__ void scale(float *x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] *= 2.0f;
}

int main() {
    int n = 64;
    float *h_x = (float *)malloc(n * sizeof(float));
    for (int i = 0; i < n; i++) h_x[i] = i;
    scale<<<2, 32>>>(h_x, n);  // BUG: h_x is host memory
    cudaError_t e = cudaDeviceSynchronize();
    printf("%s\n", cudaGetErrorName(e));
    return 0;
}
