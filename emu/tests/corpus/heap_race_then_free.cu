// BROKEN(race): every thread of the block writes the one heap cell thread 0 allocated, which thread 0 then frees — fixed by a single writer
// Thread mapping: one cell per block, shared through a __shared__ pointer.
// Shared memory: one pointer.
// Launch: any; out[blockIdx.x] = 1.

extern "C" __global__ void heap_race_then_free(int *out)
{
    __shared__ int *cell;
    if (threadIdx.x == 0) {
        cell = (int *)malloc(sizeof(int));
    }
    __syncthreads();
    if (cell != NULL) {
        cell[0] = threadIdx.x; // BUG: every thread writes the same cell
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        out[blockIdx.x] = 1;
        free(cell);
    }
}
