// BROKEN(uninitialized): the tree assumes 256 threads; with fewer, it adds shared memory no thread wrote — fixed in tree_reduce.cu
// Thread mapping: one element per thread; thread 0 writes the block's sum.
// Shared memory: 256 floats, static; only blockDim.x of them are written.
// Launch: blockDim.x <= 256; correct only when blockDim.x == 256.

extern "C" __global__ void reduce_assumes_256(const float *x, float *partial, int n)
{
    __shared__ float s[256];
    int tid = threadIdx.x;
    int i = blockIdx.x * blockDim.x + tid;
    s[tid] = i < n ? x[i] : 0.0f;
    __syncthreads();
    for (int stride = 128; stride > 0; stride /= 2) {
        if (tid < stride) {
            s[tid] += s[tid + stride]; // BUG: s[blockDim.x..256) was never written
        }
        __syncthreads();
    }
    if (tid == 0) {
        partial[blockIdx.x] = s[0];
    }
}
