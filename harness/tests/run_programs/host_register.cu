// FIXED: cudaHostRegister. Memory the program allocated itself (malloc, mmap) is registered:
// async copies take it, and a kernel writes it in place through the device pointer
// cudaHostGetDevicePointer gives. Once unregistered it is plain memory holding what was
// written.
#include <cstdio>
#include <cstdlib>
#include <sys/mman.h>

__global__ void square_in_place(int *x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = x[i] * x[i];
}

__global__ void add_one(int *x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] += 1;
}

static const char *memory_type(const void *p) {
    cudaPointerAttributes a;
    if (cudaPointerGetAttributes(&a, p) != cudaSuccess) return "error";
    return a.type == cudaMemoryTypeHost ? "host (registered)"
           : a.type == cudaMemoryTypeUnregistered ? "unregistered" : "other";
}

int main() {
    const int n = 3000;
    const size_t bytes = n * sizeof(int);

    // Heap memory: registered, copied to the device and back on a stream.
    int *heap = (int *)malloc(bytes);
    for (int i = 0; i < n; i++) heap[i] = i;
    printf("before registering: %s\n", memory_type(heap));
    cudaHostRegister(heap, bytes, cudaHostRegisterDefault);
    printf("registered: %s\n", memory_type(heap));
    int *d;
    cudaMalloc(&d, bytes);
    cudaStream_t stream;
    cudaStreamCreate(&stream);
    cudaMemcpyAsync(d, heap, bytes, cudaMemcpyHostToDevice, stream);
    add_one<<<(n + 255) / 256, 256, 0, stream>>>(d, n);
    cudaMemcpyAsync(heap, d, bytes, cudaMemcpyDeviceToHost, stream);
    cudaStreamSynchronize(stream);
    printf("copied through the device: heap[10] = %d, heap[%d] = %d\n", heap[10], n - 1, heap[n - 1]);

    // mmap'd memory, mapped for the device: a kernel works on it where it is.
    size_t page_rounded = (bytes + 4095) / 4096 * 4096;
    int *mapped = (int *)mmap(nullptr, page_rounded, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    for (int i = 0; i < n; i++) mapped[i] = i;
    cudaHostRegister(mapped, bytes, cudaHostRegisterMapped);
    int *on_device;
    cudaHostGetDevicePointer((void **)&on_device, mapped, 0);
    square_in_place<<<(n + 255) / 256, 256, 0, stream>>>(on_device, n);
    cudaStreamSynchronize(stream);
    printf("squared in place: mapped[12] = %d, mapped[%d] = %d\n", mapped[12], n - 1, mapped[n - 1]);
    // What the host writes now, the next kernel reads.
    mapped[0] = 7;
    square_in_place<<<1, 1, 0, stream>>>(on_device, 1);
    cudaStreamSynchronize(stream);
    printf("host wrote 7, kernel squared it: mapped[0] = %d\n", mapped[0]);

    cudaError_t twice = cudaHostRegister(mapped, bytes, cudaHostRegisterMapped);
    printf("registering it again: %s\n", cudaGetErrorName(twice));
    cudaGetLastError();

    cudaHostUnregister(mapped);
    cudaHostUnregister(heap);
    printf("unregistered: %s, mapped[12] = %d, heap[10] = %d\n", memory_type(heap), mapped[12], heap[10]);
    cudaError_t again = cudaHostUnregister(heap);
    printf("unregistering it again: %s\n", cudaGetErrorName(again));
    cudaGetLastError();

    printf("%s\n", cudaGetErrorString(cudaGetLastError()));
    munmap(mapped, page_rounded);
    free(heap);
    cudaFree(d);
    cudaStreamDestroy(stream);
    return 0;
}
