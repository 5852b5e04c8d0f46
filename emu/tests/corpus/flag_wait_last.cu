// FIXED: every block waits for a flag that the grid's last block sets.
// Thread mapping: thread 0 of each block.
// Shared memory: none.
// Launch: any grid; on a GPU every block must be resident at once, or the waiters starve the last block.

extern "C" __global__ void flag_wait_last(volatile int *flag, int *arrived)
{
    if (threadIdx.x != 0) {
        return;
    }
    if (blockIdx.x == gridDim.x - 1) {
        __threadfence();
        flag[0] = 1;
        return;
    }
    while (flag[0] == 0) {
    }
    atomicAdd(arrived, 1);
}
