// What cudaFuncGetAttributes says a kernel was built for. CUB asks it of an empty kernel and picks
// its tuning by the answer, which must be one of the architectures the program carries: a plain
// `nvcc` build carries compute_75 PTX, which a newer GPU's driver compiles for itself.
#include <cstdio>

__global__ void empty() {}

int main() {
    cudaFuncAttributes attributes;
    cudaError_t status = cudaFuncGetAttributes(&attributes, empty);
    if (status != cudaSuccess) {
        printf("cudaFuncGetAttributes: %s\n", cudaGetErrorString(status));
        return 1;
    }
    printf("ptxVersion %d\n", attributes.ptxVersion);
    return 0;
}
