// FIXED: device malloc and free: each thread builds a list in its own heap block, sums it, frees it.
// Thread mapping: one thread per element of out.
// Shared memory: none.
// Launch: any; out[i] = sum over k < len of (i + k) * k, with len = 1 + i % 17; -1 if malloc failed.

extern "C" __global__ void heap_blocks(long long *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) {
        return;
    }
    int len = 1 + i % 17;
    long long *items = (long long *)malloc(len * sizeof(long long));
    if (items == nullptr) {
        out[i] = -1;
        return;
    }
    for (int k = 0; k < len; ++k) {
        items[k] = (long long)(i + k) * k;
    }
    long long sum = 0;
    for (int k = 0; k < len; ++k) {
        sum += items[k];
    }
    free(items);
    out[i] = sum;
}
