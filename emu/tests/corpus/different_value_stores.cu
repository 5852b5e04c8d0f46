// BROKEN(race): every lane of a warp stores its own lane number into the warp's one slot, so
// which value lands is up to the hardware — fixed in same_value_stores.cu, where the values agree.
// Thread mapping: lane i of warp w writes slot[w] = i, then the block reads the slots.
// Shared memory: one int per warp.
// Launch: 1 block of 64 threads.

extern "C" __global__ void different_value_stores(int *out)
{
    __shared__ int slot[2];
    int t = threadIdx.x;
    slot[t / 32] = t % 32; // BUG: 32 lanes write 32 different values to one word
    __syncthreads();
    out[t] = slot[t / 32];
}
