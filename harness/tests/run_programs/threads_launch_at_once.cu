// FIXED: host threads that launch at the same moment, each with its own shape and stream, and
// one that fills its pinned buffer while the other's kernel runs (NVIDIA's simpleCallback does
// both). Each launch gets the configuration its own thread pushed, and what a host thread wrote
// during another thread's launch is still there after it.
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <thread>

__global__ void shape(int *threads) {
  if (blockIdx.x == 0 && threadIdx.x == 0) *threads = gridDim.x * blockDim.x;
}

__global__ void busy(float *x, int rounds) {
  float v = x[threadIdx.x];
  for (int r = 0; r < rounds; r++) v = v * 0.5f + 1.0f;
  x[threadIdx.x] = v;
}

static std::mutex m;
static std::condition_variable moved;
static int stage = 0;

static void reach(int s) {
  {
    std::lock_guard<std::mutex> hold(m);
    if (stage < s) stage = s;
  }
  moved.notify_all();
}

static void wait_for(int s) {
  std::unique_lock<std::mutex> hold(m);
  moved.wait(hold, [s] { return stage >= s; });
}

// Evaluated between <<<…>>>'s push of the configuration and the launch that pops it.
static int *between(int announce, int await, int *p) {
  reach(announce);
  wait_for(await);
  return p;
}

static int launched_with(int blocks, int threads, int announce, int await) {
  cudaStream_t s;
  int *d, h = 0;
  cudaStreamCreate(&s);
  cudaMalloc(&d, sizeof(int));
  if (announce > 1) wait_for(announce - 1);
  shape<<<blocks, threads, 0, s>>>(between(announce, await, d));
  reach(announce + 2);
  cudaMemcpyAsync(&h, d, sizeof(int), cudaMemcpyDeviceToHost, s);
  cudaStreamSynchronize(s);
  cudaFree(d);
  cudaStreamDestroy(s);
  return h;
}

int main() {
  // The first thread pushes its configuration, then the second pushes its own, then the first
  // pops: it must get its own, not the one pushed last.
  int first = 0, second = 0;
  std::thread a([&] { first = launched_with(1, 32, 1, 2); });
  std::thread b([&] { second = launched_with(2, 64, 2, 3); });
  a.join();
  b.join();
  printf("the first thread's launch ran %d threads, the second's %d\n", first, second);

  // One thread's kernel runs for a while; meanwhile another fills its own pinned buffer.
  const int n = 32, filled = 1 << 16;
  float *x, *h_x;
  int *pinned;
  cudaMalloc(&x, n * sizeof(float));
  cudaMallocHost(&h_x, n * sizeof(float));
  cudaMallocHost(&pinned, filled * sizeof(int));
  for (int i = 0; i < n; i++) h_x[i] = 0.0f;
  cudaMemcpy(x, h_x, n * sizeof(float), cudaMemcpyHostToDevice);
  bool started = false;
  std::thread runner([&] {
    {
      std::lock_guard<std::mutex> hold(m);
      started = true;
    }
    moved.notify_all();
    busy<<<1, n>>>(x, 400000);
    cudaDeviceSynchronize();
  });
  {
    std::unique_lock<std::mutex> hold(m);
    moved.wait(hold, [&] { return started; });
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  for (int i = 0; i < filled; i++) pinned[i] = i;
  runner.join();
  long sum = 0;
  for (int i = 0; i < filled; i++) sum += pinned[i];
  cudaMemcpy(h_x, x, n * sizeof(float), cudaMemcpyDeviceToHost);
  printf("pinned sum %ld (expected %ld), x[0] = %.1f\n", sum, (long)filled * (filled - 1) / 2, h_x[0]);
  cudaFree(x);
  cudaFreeHost(h_x);
  cudaFreeHost(pinned);
  printf("%s\n", cudaGetErrorName(cudaGetLastError()));
  return first == 32 && second == 128 && sum == (long)filled * (filled - 1) / 2 ? 0 : 1;
}
