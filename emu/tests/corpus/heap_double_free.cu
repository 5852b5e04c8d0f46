// BROKEN(double free): an error path frees the block, then the common path frees it again.
// Thread mapping: one thread per element of out.
// Shared memory: none.
// Launch: any; out[i] = i, and odd threads take the error path.

extern "C" __global__ void heap_double_free(int *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) {
        return;
    }
    int *cell = (int *)malloc(sizeof(int));
    cell[0] = i;
    out[i] = cell[0];
    if (i % 2 == 1) {
        free(cell);
    }
    free(cell); // BUG: odd threads already freed cell
}
