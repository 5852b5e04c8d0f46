// BROKEN(launch): a kernel's registers and shared memory, as the runtime reports them and as
// launches meet them: occupancy, attributes, and blocks the register file cannot hold.
// Compare: gpu
#include <cstdio>
#include <cuda_runtime.h>

// Keeps K values live in registers across a loop whose trip count the compiler cannot know.
template <int K>
__global__ void keeps_live(const float *in, float *out, int rounds) {
  float v[K];
#pragma unroll
  for (int k = 0; k < K; k++) v[k] = in[threadIdx.x * K + k];
  for (int r = 0; r < rounds; r++) {
#pragma unroll
    for (int k = 0; k < K; k++) v[k] = v[k] * v[(k + 1) % K] + v[(k + 7) % K];
  }
  float s = 0;
#pragma unroll
  for (int k = 0; k < K; k++) s += v[k] * (k + 1);
  out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}

__global__ void __launch_bounds__(256) bounded(float *out) { out[threadIdx.x] = threadIdx.x; }

__global__ void tiled(float *out) {
  __shared__ float tile[4096];
  tile[threadIdx.x] = threadIdx.x;
  __syncthreads();
  out[threadIdx.x] = tile[(threadIdx.x + 1) % blockDim.x];
}

template <typename F> void describe(const char *name, F kernel) {
  cudaFuncAttributes a;
  cudaFuncGetAttributes(&a, kernel);
  printf("%s: %d registers, %zu bytes static shared, %zu bytes local, max %d threads per block, %d bytes dynamic shared at most\n",
         name, a.numRegs, a.sharedSizeBytes, a.localSizeBytes, a.maxThreadsPerBlock, a.maxDynamicSharedSizeBytes);
  for (int threads : {64, 128, 256, 512, 1024}) {
    int blocks = -1;
    cudaError_t e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, kernel, threads, 0);
    printf("  %4d threads: %d blocks per SM (%s)\n", threads, blocks, cudaGetErrorName(e));
  }
}

int main() {
  setvbuf(stdout, NULL, _IONBF, 0);
  describe("keeps_live<8>", keeps_live<8>);
  describe("keeps_live<40>", keeps_live<40>);
  describe("keeps_live<64>", keeps_live<64>);
  describe("keeps_live<100>", keeps_live<100>);
  describe("bounded", bounded);
  describe("tiled", tiled);
  for (size_t kb : {0, 16, 48, 56, 100, 112, 113, 114, 200, 226, 227}) {
    int blocks = -1;
    if (kb > 48) cudaFuncSetAttribute(keeps_live<8>, cudaFuncAttributeMaxDynamicSharedMemorySize, int(kb * 1024));
    cudaError_t e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, keeps_live<8>, 128, kb * 1024);
    printf("keeps_live<8>, 128 threads, %zu KiB dynamic shared: %d blocks per SM (%s)\n", kb, blocks, cudaGetErrorName(e));
  }
  for (int blocks : {1, 2, 4, 32, 33}) {
    size_t bytes = 0;
    cudaError_t e = cudaOccupancyAvailableDynamicSMemPerBlock(&bytes, tiled, blocks, 128);
    printf("tiled, %d blocks of 128: %zu bytes of dynamic shared memory each (%s)\n", blocks, bytes, cudaGetErrorName(e));
  }
  float *in, *out;
  cudaMalloc(&in, 1024 * 100 * sizeof(float));
  cudaMalloc(&out, 1024 * 1024 * sizeof(float));
  cudaMemset(in, 0, 1024 * 100 * sizeof(float));
  for (int threads : {256, 512, 640, 1024}) {
    keeps_live<64><<<1, threads>>>(in, out, 1); // BUG: 1024 threads of 70 registers do not fit
    cudaError_t e = cudaGetLastError();
    cudaError_t s = cudaDeviceSynchronize();
    printf("keeps_live<64><<<1, %d>>>: %s, then %s\n", threads, cudaGetErrorName(e), cudaGetErrorName(s));
  }
  for (int threads : {512, 544, 576, 608}) {
    keeps_live<100><<<1, threads>>>(in, out, 1);
    cudaError_t e = cudaGetLastError();
    cudaError_t s = cudaDeviceSynchronize();
    printf("keeps_live<100><<<1, %d>>>: %s, then %s\n", threads, cudaGetErrorName(e), cudaGetErrorName(s));
  }
  for (int threads : {256, 257, 512}) {
    bounded<<<1, threads>>>(out);
    cudaError_t e = cudaGetLastError();
    printf("bounded<<<1, %d>>>: %s\n", threads, cudaGetErrorName(e));
  }
  int sms = 0, per_sm = 0;
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, keeps_live<40>, 64, 0);
  for (int extra : {0, 1}) {
    int rounds = 0;
    void *args[] = {&in, &out, &rounds};
    cudaError_t e = cudaLaunchCooperativeKernel((void *)keeps_live<40>, dim3(per_sm * sms + extra), dim3(64), args, 0, 0);
    cudaError_t s = cudaDeviceSynchronize();
    printf("cooperative keeps_live<40>, %d x %d SMs + %d blocks of 64: %s, then %s\n", per_sm, sms, extra,
           cudaGetErrorName(e), cudaGetErrorName(s));
  }
  return 0;
}
