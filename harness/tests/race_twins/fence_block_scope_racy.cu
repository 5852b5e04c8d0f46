// TWIN(racy): fence, inter-block, block vs device scope — block 0 publishes data behind a flag
// with __threadfence_block(), which orders its writes only for its own block; block 1 waits for
// the flag and reads the data. Twin: fence_device_scope_clean.cu.
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
        __threadfence_block();
        *flag = 1;
    } else {
        while (*flag == 0) {
        }
        __threadfence();
        out[0] = data[0]; // RACE
    }
}
