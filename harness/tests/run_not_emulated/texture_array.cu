// Calls the runtime has but Racetrack does not emulate yet (a CUDA array, then a 3D copy):
// each one names itself and its line once, returns cudaErrorNotSupported, and the program goes
// on to handle it as its own checks do.
#include <cstdio>
#include <cuda_runtime.h>

__global__ void fill(float *out) { out[threadIdx.x] = threadIdx.x; }

int main() {
    float *d;
    cudaMalloc(&d, 32 * sizeof(float));
    fill<<<1, 32>>>(d);
    cudaDeviceSynchronize();
    printf("kernel ran\n");
    cudaChannelFormatDesc desc = cudaCreateChannelDesc<float>();
    cudaArray_t array;
    for (int attempt = 0; attempt < 2; attempt++) {
        cudaError_t err = cudaMallocArray(&array, &desc, 32, 1); // NOT EMULATED: array
        printf("cudaMallocArray: %s\n", cudaGetErrorName(err));
    }
    printf("last error: %s\n", cudaGetErrorName(cudaGetLastError()));
    printf("and after: %s\n", cudaGetErrorName(cudaGetLastError()));
    cudaMemcpy3DParms copy = {};
    cudaError_t err = cudaMemcpy3D(&copy); // NOT EMULATED: copy
    printf("cudaMemcpy3D: %s\n", cudaGetErrorName(err));
    cudaFree(d);
    return 3;
}
