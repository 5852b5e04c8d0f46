// BROKEN(race): block 1 sees block 0's flag but reads the data with no fence after the flag: nothing makes the read wait for it.
// Thread mapping: thread 0 of blocks 0 and 1.
// Shared memory: none.
// Launch: grid of 2 blocks (needs both resident, as they are on the emulator and most GPUs).

extern "C" __global__ void flag_wait_no_acquire(volatile int *flag, int *data, int *out)
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
        out[0] = data[0] + 1; // BUG: no __threadfence() between seeing the flag and this read
    }
}
