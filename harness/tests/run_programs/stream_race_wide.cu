// BROKEN(race): a copy on stream b reads what a kernel on stream a writes, and nothing orders
// the two. The grid is wide enough (256 blocks of 256 threads) that its blocks run on several
// cores, whose footprints the copy is checked against.
#include <cstdio>

__global__ void twice(const float *x, float *y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = 2.0f * x[i];
}

int main() {
    const int n = 1 << 16;
    float *h, *d_x, *d_y;
    cudaMallocHost(&h, n * sizeof(float));
    for (int i = 0; i < n; i++) h[i] = 1.0f;
    cudaMalloc(&d_x, n * sizeof(float));
    cudaMalloc(&d_y, n * sizeof(float));
    cudaStream_t a, b;
    cudaStreamCreate(&a);
    cudaStreamCreate(&b);
    cudaMemcpy(d_x, h, n * sizeof(float), cudaMemcpyHostToDevice);
    twice<<<n / 256, 256, 0, a>>>(d_x, d_y, n);
    cudaMemcpyAsync(h, d_y + n - 256, 256 * sizeof(float), cudaMemcpyDeviceToHost, b);  // BUG: not ordered after twice
    cudaDeviceSynchronize();
    printf("h[255] = %.1f\n", h[255]);
    return 0;
}
