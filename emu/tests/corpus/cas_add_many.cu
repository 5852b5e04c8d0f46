// FIXED: atomicAdd written as an atomicCAS loop, every thread on one word: slow, not stuck.
// Thread mapping: one thread per value; all of them update total[0].
// Shared memory: none.
// Launch: any; total[0] = sum of values. With 10,240 threads this is ~400 M thread-instructions.

extern "C" __global__ void cas_add_many(const int *values, int *total, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) {
        return;
    }
    int old = *(volatile int *)total;
    int assumed;
    do {
        assumed = old;
        old = atomicCAS(total, assumed, assumed + values[i]);
    } while (assumed != old);
}
