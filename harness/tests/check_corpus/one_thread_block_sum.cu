// FIXED: the naive reduction tutorials start with: thread 0 of each block adds up its block's
// slice of `in` in a register loop, and the block's other threads return at once.
// Thread mapping: one block per slice of blockDim.x elements; only thread 0 works.
// Shared memory: none.
// Launch: any grid × any block; block_sums has one element per block, added on the host.
extern "C" __global__ void one_thread_block_sum(const float *in, float *block_sums, int n)
{
    if (threadIdx.x != 0) {
        return;
    }
    const int base = blockIdx.x * blockDim.x;
    float sum = 0.0f;
    for (int i = base; i < base + (int)blockDim.x && i < n; i++) {
        sum += in[i];
    }
    block_sums[blockIdx.x] = sum;
}
