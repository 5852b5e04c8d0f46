// FIXED: a block sum with CUB's BlockReduce, included through CUB's umbrella header as most
// code does. The umbrella also brings CUB's device-wide algorithms, host code NVRTC refuses;
// check compiles the block and warp primitives kernels use.
// Thread mapping: grid-stride partial sums, one per thread, then one BlockReduce per block.
// Shared memory: BlockReduce's temporary storage.
// Launch: blocks of THREADS threads, any grid; out has one element per block.
#include <cub/cub.cuh>

#define THREADS 128

__global__ void block_sums(const int *in, int *out, int n)
{
    using BlockSum = cub::BlockReduce<int, THREADS>;
    __shared__ typename BlockSum::TempStorage scratch;
    int partial = 0;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        partial += in[i];
    }
    int sum = BlockSum(scratch).Sum(partial);
    if (threadIdx.x == 0) {
        out[blockIdx.x] = sum;
    }
}
