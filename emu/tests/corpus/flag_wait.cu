// FIXED: block 1 waits for block 0's result through a volatile flag and a fence.
// Thread mapping: thread 0 of blocks 0 and 1.
// Shared memory: none.
// Launch: grid of 2 blocks (needs both resident, as they are on the emulator and most GPUs).

extern "C" __global__ void flag_wait(volatile int *flag, int *data, int *out)
{
    if (threadIdx.x != 0) {
        return;
    }
    if (blockIdx.x == 0) {
        data[0] = 42;
        __threadfence();
        flag[0] = 1;
    } else if (blockIdx.x == 1) {
        while (flag[0] == 0) {
        }
        __threadfence();
        out[0] = data[0] + 1;
    }
}
