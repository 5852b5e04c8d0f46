// BROKEN(race): a thread reads its neighbour's element though that neighbour never waited for the
// asynchronous copy (cp.async) that writes it: the barrier orders only what each thread did
// before arriving. Fixed in async_copy_barrier.cu.
#include <cstdio>
#include <cuda/barrier>
#include <cuda_pipeline.h>

__global__ void rotate(const int *in, int *out) {
  __shared__ int tile[256];
  __shared__ cuda::barrier<cuda::thread_scope_block> bar;
  int t = threadIdx.x, base = blockIdx.x * blockDim.x;
  if (t == 0) init(&bar, blockDim.x);
  __syncthreads();
  __pipeline_memcpy_async(&tile[t], &in[base + t], sizeof(int));
  __pipeline_commit();
  bar.arrive_and_wait();
  out[base + t] = 2 * tile[(t + 1) % blockDim.x];  // BUG: the neighbour's copy may not have landed
}

int main() {
  const int blocks = 4, threads = 256, n = blocks * threads;
  int h_in[n], h_out[n], *in, *out;
  for (int i = 0; i < n; i++) h_in[i] = 3 * i;
  cudaMalloc(&in, sizeof h_in);
  cudaMalloc(&out, sizeof h_out);
  cudaMemcpy(in, h_in, sizeof h_in, cudaMemcpyHostToDevice);
  rotate<<<blocks, threads>>>(in, out);
  cudaMemcpy(h_out, out, sizeof h_out, cudaMemcpyDeviceToHost);
  int wrong = 0;
  long sum = 0;
  for (int i = 0; i < n; i++) {
    int b = i / threads, t = i % threads;
    wrong += h_out[i] != 2 * h_in[b * threads + (t + 1) % threads];
    sum += h_out[i];
  }
  printf("%d of %d elements wrong, sum %ld\n", wrong, n, sum);
  cudaFree(in);
  cudaFree(out);
  return wrong != 0;
}
