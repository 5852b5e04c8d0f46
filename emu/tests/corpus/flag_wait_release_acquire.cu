// FIXED: block 1 waits for block 0's result through st.release and ld.acquire, with no separate fence.
// Thread mapping: thread 0 of blocks 0 and 1.
// Shared memory: none.
// Launch: grid of 2 blocks (needs both resident, as they are on the emulator and most GPUs).

__device__ void store_release(int *flag, int value)
{
    asm volatile("st.release.gpu.global.u32 [%0], %1;" ::"l"(flag), "r"(value) : "memory");
}

__device__ int load_acquire(const int *flag)
{
    int value;
    asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(value) : "l"(flag) : "memory");
    return value;
}

extern "C" __global__ void flag_wait_release_acquire(int *flag, int *data, int *out)
{
    if (threadIdx.x != 0) {
        return;
    }
    if (blockIdx.x == 0) {
        data[0] = 42;
        store_release(flag, 1);
    } else if (blockIdx.x == 1) {
        while (load_acquire(flag) == 0) {
        }
        out[0] = data[0] + 1;
    }
}
