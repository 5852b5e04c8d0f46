// BROKEN(use after free): reads a heap block after freeing it — fixed by reading before free()
// Thread mapping: one thread per element of out.
// Shared memory: none.
// Launch: any; out[i] = 2 * i.

extern "C" __global__ void heap_use_after_free(int *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) {
        return;
    }
    int *cell = (int *)malloc(sizeof(int));
    cell[0] = 2 * i;
    free(cell);
    out[i] = cell[0]; // BUG: cell was freed on the line above
}
