// BROKEN(out of bounds): writes one element past the end of a heap block — fixed by `k < len`
// Thread mapping: one thread per element of out.
// Shared memory: none.
// Launch: any; out[i] = sum over k <= len of k.

extern "C" __global__ void heap_overflow(int *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) {
        return;
    }
    int len = 4 + i % 4;
    int *items = (int *)malloc(len * sizeof(int));
    int sum = 0;
    for (int k = 0; k <= len; ++k) {
        items[k] = k; // BUG: items[len] is past the end of the block
        sum += items[k];
    }
    free(items);
    out[i] = sum;
}
