// FIXED: a block-wide tree sum written as a C++ template, the way samples and tutorials write
// it: the element type and the block size are template parameters, and the kernel keeps C++
// linkage (no extern "C"). `racetrack check --entry 'block_sum<int, 128>'` instantiates it.
// Thread mapping: one element per thread; thread 0 of each block adds its block's sum to *out.
// Shared memory: BLOCK elements of T.
// Launch: BLOCK threads per block (a power of two), any number of blocks.
template <typename T, int BLOCK>
__global__ void block_sum(const T *in, T *out, int n)
{
    __shared__ T partial[BLOCK];
    const int tid = threadIdx.x;
    const int i = blockIdx.x * BLOCK + tid;
    partial[tid] = i < n ? in[i] : T(0);
    __syncthreads();
    for (int stride = BLOCK / 2; stride > 0; stride /= 2) {
        if (tid < stride) {
            partial[tid] += partial[tid + stride];
        }
        __syncthreads();
    }
    if (tid == 0) {
        atomicAdd(out, partial[0]);
    }
}
