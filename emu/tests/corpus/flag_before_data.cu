// BROKEN(race): block 0 sets the flag before it writes the data, so block 1 can see the flag and read the data too early.
// Thread mapping: thread 0 of blocks 0 and 1.
// Shared memory: none.
// Launch: grid of 2 blocks (needs both resident, as they are on the emulator and most GPUs).

extern "C" __global__ void flag_before_data(volatile int *flag, int *data, int *out)
{
    if (threadIdx.x != 0) {
        return;
    }
    if (blockIdx.x == 0) {
        flag[0] = 1;
        __threadfence();
        data[0] = 42; // BUG: the flag above already told block 1 the data is there
    } else if (blockIdx.x == 1) {
        while (flag[0] == 0) {
        }
        __threadfence();
        out[0] = data[0] + 1;
    }
}
