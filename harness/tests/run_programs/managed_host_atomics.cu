// FIXED: the host and a kernel add to one managed counter at the same time, the host with its own
// atomics and the kernel with system-scope ones, as a device with concurrentManagedAccess allows.
#include <cstdio>

__global__ void count_up(int *counter, int adds_per_thread) {
    for (int k = 0; k < adds_per_thread; k++) atomicAdd_system(counter, 1);
}

int main() {
    int concurrent = 0;
    cudaDeviceGetAttribute(&concurrent, cudaDevAttrConcurrentManagedAccess, 0);
    if (!concurrent) {
        printf("this device cannot share managed memory with the host during a kernel\n");
        return 0;
    }
    int *counter;
    cudaMallocManaged(&counter, sizeof(int));
    *counter = 0;
    const int blocks = 4, threads = 64, adds_per_thread = 8, host_adds = 1000;
    count_up<<<blocks, threads>>>(counter, adds_per_thread);
    for (int k = 0; k < host_adds; k++) __sync_fetch_and_add(counter, 1);
    cudaDeviceSynchronize();
    printf("counter: %d (kernel %d, host %d)\n", *counter, blocks * threads * adds_per_thread,
           host_adds);
    cudaFree(counter);
    return 0;
}
