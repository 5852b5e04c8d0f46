// BROKEN(assert): a device assert fails in one thread; the kernel stops, the message goes to
// stderr as a GPU's driver writes it, and the host's next wait returns cudaErrorAssert.
// Compare: gpu
#include <cassert>
#include <cstdio>

__global__ void check_positive(const int *values, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    assert(values[i] > 0); // BUG: values[5] is 0
  }
}

int main() {
  const int n = 8;
  int host[n] = {1, 2, 3, 4, 5, 0, 7, 8};
  int *values;
  cudaMalloc(&values, sizeof host);
  cudaMemcpy(values, host, sizeof host, cudaMemcpyHostToDevice);
  check_positive<<<1, n>>>(values, n);
  cudaError_t err = cudaDeviceSynchronize();
  printf("%s: %s\n", cudaGetErrorName(err), cudaGetErrorString(err));
  return err == cudaSuccess ? 0 : 1;
}
