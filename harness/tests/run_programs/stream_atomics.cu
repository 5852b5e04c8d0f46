// FIXED: two kernels on two streams count into one histogram with atomicAdd, unordered with
// each other: atomics on one device are atomic towards each other whichever stream they run on.
#include <cstdio>

__global__ void count(const unsigned char *data, int n, unsigned int *histo) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        atomicAdd(&histo[data[i] % 16], 1u);
}

int main() {
    const int n = 4096;
    unsigned char h[n];
    for (int i = 0; i < n; i++) h[i] = (unsigned char)(i * 7);
    unsigned char *d;
    unsigned int *histo, out[16];
    cudaMalloc(&d, n);
    cudaMalloc(&histo, sizeof(out));
    cudaMemcpy(d, h, n, cudaMemcpyHostToDevice);
    cudaMemset(histo, 0, sizeof(out));
    cudaStream_t a, b;
    cudaStreamCreate(&a);
    cudaStreamCreate(&b);
    count<<<4, 128, 0, a>>>(d, n / 2, histo);
    count<<<4, 128, 0, b>>>(d + n / 2, n / 2, histo);
    cudaDeviceSynchronize();
    cudaMemcpy(out, histo, sizeof(out), cudaMemcpyDeviceToHost);
    unsigned int total = 0;
    for (int i = 0; i < 16; i++) total += out[i];
    printf("total %u, bin 0 holds %u\n", total, out[0]);
    return total == n ? 0 : 1;
}
