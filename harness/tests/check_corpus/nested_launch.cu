// FIXED: a kernel that launches a kernel (dynamic parallelism). Thread 0 of each block
// launches one child block that doubles its block's slice; the parent writes nothing the child
// reads after the launch. NVRTC compiles it as relocatable code, and the emulator is the device
// runtime: a child grid runs after its parent grid, as CUDA 12 and 13 allow.
// Thread mapping: thread 0 of each block launches one child block of `width` threads.
// Shared memory: none.
// Launch: blocks of any size; data has gridDim.x * width elements.

__global__ void double_slice(int *slice, int width)
{
    if (threadIdx.x < width) {
        slice[threadIdx.x] *= 2;
    }
}

__global__ void parent(int *data, int width)
{
    if (threadIdx.x == 0) {
        double_slice<<<1, width>>>(data + blockIdx.x * width, width);
        cudaError_t launched = cudaGetLastError();
        if (launched != cudaSuccess) {
            printf("block %d: launch failed: %s\n", blockIdx.x, cudaGetErrorString(launched));
        }
    }
}
