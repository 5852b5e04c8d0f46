// BROKEN(race): the kernel on stream b reads a buffer that an async copy on stream a is still
// writing; nothing (no event, no synchronize) orders the two.
#include <cstdio>

__global__ void sum(const int *x, int n, int *out) {
    int s = 0;
    for (int i = 0; i < n; i++) s += x[i];
    *out = s;
}

int main() {
    const int n = 256;
    int *h_x, *d_x, *d_out, h_out = 0;
    cudaMallocHost(&h_x, n * sizeof(int));
    for (int i = 0; i < n; i++) h_x[i] = 1;
    cudaMalloc(&d_x, n * sizeof(int));
    cudaMalloc(&d_out, sizeof(int));
    cudaStream_t a, b;
    cudaStreamCreate(&a);
    cudaStreamCreate(&b);
    cudaMemcpyAsync(d_x, h_x, n * sizeof(int), cudaMemcpyHostToDevice, a);
    sum<<<1, 1, 0, b>>>(d_x, n, d_out);  // BUG: no cudaStreamWaitEvent for the copy on a
    cudaMemcpyAsync(&h_out, d_out, sizeof(int), cudaMemcpyDeviceToHost, b);
    cudaDeviceSynchronize();
    printf("sum = %d\n", h_out);
    return 0;
}
