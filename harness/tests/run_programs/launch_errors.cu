// BROKEN(launch): launches and calls a GPU refuses, one after another, each printing the error
// CUDA returns; what the emulated device answers must be what an H100 answers.
// Compare: gpu
#include <cstdio>
__global__ void k(int *x) { if (x) x[0] = 1; }
__global__ void big(int *x) { extern __shared__ int s[]; s[threadIdx.x] = 1; if (x) x[0] = s[0]; }
static void show(const char *what) {
  cudaError_t e = cudaGetLastError();
  printf("%-34s %s | %s\n", what, cudaGetErrorName(e), cudaGetErrorString(e));
}
int main() {
  setvbuf(stdout, NULL, _IONBF, 0);
  k<<<1, 0>>>(nullptr); show("block 0");
  k<<<0, 32>>>(nullptr); show("grid 0");
  k<<<1, 1025>>>(nullptr); show("block 1025"); // BUG: at most 1024 threads a block
  k<<<1, dim3(1024, 2, 1)>>>(nullptr); show("block 1024x2");
  k<<<1, dim3(1, 1, 65)>>>(nullptr); show("block z 65");
  k<<<dim3(1, 65536, 1), 32>>>(nullptr); show("grid y 65536");
  k<<<dim3(1, 1, 65536), 32>>>(nullptr); show("grid z 65536");
  big<<<1, 32, 49153>>>(nullptr); show("dynamic shared 49153");
  cudaFuncSetAttribute(big, cudaFuncAttributeMaxDynamicSharedMemorySize, 100000); show("set attribute 100000");
  big<<<1, 32, 100000>>>(nullptr); show("dynamic shared 100000 after");
  big<<<1, 32, 100001>>>(nullptr); show("dynamic shared 100001 after");
  cudaFuncSetAttribute(big, cudaFuncAttributeMaxDynamicSharedMemorySize, 300000); show("set attribute 300000");
  void *huge; cudaMalloc(&huge, size_t(1) << 50); show("malloc 1 PiB");
  void *p; cudaMalloc(&p, 16);
  cudaMemset(p, 0, 32); show("memset past end");
  cudaFree(p); cudaFree(p); show("double free");
  int h = 0;
  cudaMemcpy((void *)&h, &h, 4, cudaMemcpyHostToDevice); show("H2D into host memory");
  int n; cudaGetDeviceCount(&n); printf("devices %d\n", n);
  cudaSetDevice(7); show("set device 7");
  int blocks; cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, k, 256, 0); printf("occupancy 256: %d\n", blocks);
  cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, big, 1024, 40000); printf("occupancy 1024/40000: %d\n", blocks);
  int dv, rv; cudaDriverGetVersion(&dv); cudaRuntimeGetVersion(&rv); printf("driver %d runtime %d\n", dv, rv);
  size_t lim; cudaDeviceGetLimit(&lim, cudaLimitStackSize); printf("stack %zu\n", lim);
  cudaDeviceGetLimit(&lim, cudaLimitPrintfFifoSize); printf("printf fifo %zu\n", lim);
  cudaDeviceGetLimit(&lim, cudaLimitMallocHeapSize); printf("heap %zu\n", lim);
  cudaMemcpy(&h, (void *)0x1234, 4, cudaMemcpyDeviceToHost); show("copy from a bad device pointer");
  return 0;
}
