// FIXED: copies and kernels on two streams, ordered by an event; symbols, pinned memory, a
// template kernel, device printf, and a printed result.
#include <cstdio>
#include <cstdlib>

__constant__ float c_scale;
__device__ int d_calls;

template <typename T>
__global__ void scale(T *x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = x[i] * c_scale;
    if (i == 0) {
        atomicAdd(&d_calls, 1);
        printf("scale ran with %d blocks\n", gridDim.x);
    }
}

int main(int argc, char **argv) {
    int n = argc > 1 ? atoi(argv[1]) : 1000;
    float *h_x, *d_x;
    cudaMallocHost(&h_x, n * sizeof(float));
    for (int i = 0; i < n; i++) h_x[i] = i;
    cudaMalloc(&d_x, n * sizeof(float));
    float s = 3.0f;
    cudaMemcpyToSymbol(c_scale, &s, sizeof(s));
    cudaStream_t copy, compute;
    cudaEvent_t copied;
    cudaStreamCreate(&copy);
    cudaStreamCreate(&compute);
    cudaEventCreate(&copied);
    cudaMemcpyAsync(d_x, h_x, n * sizeof(float), cudaMemcpyHostToDevice, copy);
    cudaEventRecord(copied, copy);
    cudaStreamWaitEvent(compute, copied, 0);
    scale<float><<<(n + 255) / 256, 256, 0, compute>>>(d_x, n);
    cudaMemcpyAsync(h_x, d_x, n * sizeof(float), cudaMemcpyDeviceToHost, compute);
    cudaStreamSynchronize(compute);
    int calls = 0;
    cudaMemcpyFromSymbol(&calls, d_calls, sizeof(int));
    double total = 0;
    for (int i = 0; i < n; i++) total += h_x[i];
    printf("n = %d, total = %.1f, expected %.1f, calls = %d\n", n, total, 3.0 * n * (n - 1) / 2, calls);
    cudaError_t e = cudaGetLastError();
    printf("%s\n", cudaGetErrorString(e));
    return total == 3.0 * n * (n - 1) / 2 ? 0 : 1;
}
