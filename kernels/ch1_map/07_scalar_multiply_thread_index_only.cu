// BROKEN(wrong result): the index from threadIdx.x alone: every block redoes the same elements — fixed in 02_scalar_multiply.cu
// Thread mapping: thread t of every block computes y[t]; elements from blockDim.x on are never written.
// Shared memory: none.
// Launch: ceil(n / blockDim.x) blocks; right only when one block covers n.

// ANCHOR: kernel
extern "C" __global__ void scalar_multiply_thread_index_only(const float *x, float a, float *y, unsigned int n)
{
    unsigned int i = threadIdx.x; // BUG: forgets blockIdx.x * blockDim.x, so i repeats in every block
    if (i < n) {
        y[i] = a * x[i];
    }
}
// ANCHOR_END: kernel
