// BROKEN(out of bounds): a stencil's left neighbour through an unsigned index: at x = 0,
// x - 1 wraps to 4294967295, four billion elements past the start, which memcheck names in[-1].
#include <cstdio>
__global__ void left_neighbour(const float *in, float *out, unsigned n) {
  unsigned x = threadIdx.x;
  if (x < n) out[x] = in[x - 1]; // BUG: x - 1 wraps at x = 0
}
int main() {
  float *in, *out;
  cudaMalloc(&in, 32 * sizeof(float));
  cudaMalloc(&out, 32 * sizeof(float));
  cudaMemset(in, 0, 32 * sizeof(float));
  left_neighbour<<<1, 32>>>(in, out, 32);
  printf("%s\n", cudaGetErrorName(cudaDeviceSynchronize()));
  return 0;
}
