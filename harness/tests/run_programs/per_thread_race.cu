// BROKEN(race): two host threads bump one counter, each on its own default stream (built with
// --default-stream per-thread), so nothing orders one thread's kernel after the other's.
// Build: nvcc --default-stream per-thread -o per_thread_race harness/tests/run_programs/per_thread_race.cu
#include <cstdio>
#include <thread>
__global__ void bump(int *counter) {
  counter[0] += 1; // BUG: two streams' kernels update it, and no event orders them
}
int main() {
  int *counter, h = 0;
  cudaMalloc(&counter, sizeof(int));
  cudaMemset(counter, 0, sizeof(int));
  cudaDeviceSynchronize();
  std::thread first([=] { bump<<<1, 1>>>(counter); }), second([=] { bump<<<1, 1>>>(counter); });
  first.join();
  second.join();
  cudaDeviceSynchronize();
  cudaMemcpy(&h, counter, sizeof(int), cudaMemcpyDeviceToHost);
  printf("counter %d\n", h);
  return 0;
}
