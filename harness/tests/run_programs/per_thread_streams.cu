// FIXED: two host threads, each with its own buffer on its own default stream: a program built
// with --default-stream per-thread, whose stream 0 is each thread's own.
// Build: nvcc --default-stream per-thread -o per_thread_streams harness/tests/run_programs/per_thread_streams.cu
#include <cstdio>
#include <thread>
__global__ void fill(int *x, int n, int value) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = value + i;
}
static void work(int value, long *sum) {
  const int n = 1000;
  int *x, h[n];
  cudaMalloc(&x, n * sizeof(int));
  fill<<<(n + 127) / 128, 128>>>(x, n, value);          // this thread's default stream
  cudaMemcpy(h, x, n * sizeof(int), cudaMemcpyDeviceToHost); // waits for it alone
  cudaStreamSynchronize(cudaStreamPerThread);
  *sum = 0;
  for (int i = 0; i < n; i++) *sum += h[i];
  cudaFree(x);
}
int main() {
  long a = 0, b = 0;
  std::thread first(work, 1, &a), second(work, 1000, &b);
  first.join();
  second.join();
  printf("sums %ld %ld, %s\n", a, b, cudaGetErrorName(cudaGetLastError()));
  return 0;
}
