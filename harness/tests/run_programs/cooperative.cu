// FIXED: a cooperative launch whose blocks meet at a grid-wide barrier (cooperative groups' grid.sync()).
#include <cstdio>
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
__global__ void twice(int *x, int *sum, int n) {
  cg::grid_group grid = cg::this_grid();
  int i = grid.thread_rank();
  if (i < n) x[i] = i;
  grid.sync();
  if (i == 0) { int s = 0; for (int j = 0; j < n; j++) s += x[j]; *sum = s; }
}
int main() {
  int n = 512, *x, *sum, h = 0;
  cudaMalloc(&x, n * sizeof(int)); cudaMalloc(&sum, sizeof(int));
  void *args[] = {&x, &sum, &n};
  cudaError_t e = cudaLaunchCooperativeKernel((void *)twice, dim3(4), dim3(128), args, 0, 0);
  cudaMemcpy(&h, sum, sizeof(int), cudaMemcpyDeviceToHost);
  printf("%s sum %d\n", cudaGetErrorString(e), h);
  return 0;
}
