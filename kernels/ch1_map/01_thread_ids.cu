// FIXED: every thread writes down its block and thread index at the element it handles.
// Thread mapping: thread_ids: one thread per element, i = blockIdx.x * blockDim.x + threadIdx.x;
//                 thread_ids_grid_stride: a grid-stride loop, so a grid smaller than the array covers it.
// Shared memory: none.
// Launch: thread_ids: ceil(n / blockDim.x) blocks of any size; thread_ids_grid_stride: any grid × block.

// ANCHOR: kernel
extern "C" __global__ void thread_ids(unsigned int *block_of, unsigned int *thread_of, unsigned int n)
{
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        block_of[i] = blockIdx.x;
        thread_of[i] = threadIdx.x;
    }
}
// ANCHOR_END: kernel

// ANCHOR: grid_stride
extern "C" __global__ void thread_ids_grid_stride(unsigned int *block_of, unsigned int *thread_of,
                                                  unsigned int n)
{
    unsigned int stride = blockDim.x * gridDim.x;
    for (unsigned int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        block_of[i] = blockIdx.x;
        thread_of[i] = threadIdx.x;
    }
}
// ANCHOR_END: grid_stride
