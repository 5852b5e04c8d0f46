// BROKEN(race): the parent finishes its slice after launching the child that doubles it. A
// child grid sees what its parent wrote before the launch; what the parent writes afterwards
// races with the child, which may already be running (CUDA 12 and 13: a kernel cannot wait for
// its children).
// Thread mapping: thread 0 of each block fills the first half, launches, then fills the rest.
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
        int *slice = data + blockIdx.x * width;
        for (int i = 0; i < width / 2; i++) slice[i] = i;
        double_slice<<<1, width>>>(slice, width);
        for (int i = width / 2; i < width; i++) slice[i] = i; // BUG: written after the launch
    }
}
