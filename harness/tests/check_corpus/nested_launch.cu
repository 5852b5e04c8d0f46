// BROKEN(refused): a kernel that launches a kernel (dynamic parallelism). NVRTC compiles it only
// as relocatable code linked with the device runtime, and the emulator does not launch kernels
// from kernels: check refuses it with the line of the launch.
// Thread mapping: thread 0 of each block launches one child block that doubles its slice.
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
        double_slice<<<1, width>>>(data + blockIdx.x * width, width); // BUG: a launch from device code
    }
}
