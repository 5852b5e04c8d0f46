// FIXED: the current device is a host thread's own, as in CUDA: a thread that sets device 1
// leaves the others on theirs, and a new thread starts on device 0. Each thread's allocation
// lives on its own device. (Host calls only: the runtime's bookkeeping is what is tested.)
// Devices: 2
#include <cstdio>
#include <thread>

static int on_device(int device, int value) {
  cudaSetDevice(device);
  int *d, h = 0, now = -1;
  cudaMalloc(&d, sizeof(int));
  cudaMemset(d, value, sizeof(int));
  cudaMemcpy(&h, d, sizeof(int), cudaMemcpyDeviceToHost);
  value = value * 0x01010101;
  cudaPointerAttributes attributes;
  cudaPointerGetAttributes(&attributes, d);
  cudaGetDevice(&now);
  cudaFree(d);
  return h == value && attributes.device == device ? now : -1;
}

int main() {
  int count = 0, mine = -1, fresh = -1, first = -1, second = -1;
  cudaGetDeviceCount(&count);
  if (count < 2) {
    printf("this program needs 2 devices\n");
    return 1;
  }
  cudaSetDevice(1);
  std::thread starts([&] { cudaGetDevice(&fresh); });
  starts.join();
  cudaGetDevice(&mine);
  printf("main thread on device %d, a new thread starts on device %d\n", mine, fresh);
  std::thread a([&] { first = on_device(0, 10); });
  std::thread b([&] { second = on_device(1, 20); });
  a.join();
  b.join();
  cudaGetDevice(&mine);
  printf("threads worked on devices %d and %d; main is still on device %d\n", first, second, mine);
  printf("%s\n", cudaGetErrorName(cudaGetLastError()));
  return fresh == 0 && first == 0 && second == 1 && mine == 1 ? 0 : 1;
}
