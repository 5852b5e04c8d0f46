// TWIN(racy): fence, inter-block, block vs device scope — the publisher fences device-wide, but
// the reader acquires with __threadfence_block(), which takes in only its own block's writes.
// Twin: fence_device_scope_clean.cu.
// check: --entry handoff --grid 2 --block 32 --arg data:i32[1]=zeros --arg flag:i32[1]=zeros --arg out:i32[1]=zeros
// why: block scope
// ptx: racy
__global__ void handoff(int *data, volatile int *flag, int *out)
{
    if (threadIdx.x != 0) {
        return;
    }
    if (blockIdx.x == 0) {
        data[0] = 42; // RACE
        __threadfence();
        *flag = 1;
    } else {
        while (*flag == 0) {
        }
        __threadfence_block();
        out[0] = data[0]; // RACE
    }
}
