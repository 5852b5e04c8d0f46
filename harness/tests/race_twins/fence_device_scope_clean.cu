// TWIN(clean): fence, inter-block, device scope — both sides fence with __threadfence(): the
// publisher's orders the data before the flag for every block, the reader's orders the flag
// before its read. Twins: fence_block_scope_racy.cu, fence_block_scope_acquire_racy.cu.
// check: --entry handoff --grid 2 --block 32 --arg data:i32[1]=zeros --arg flag:i32[1]=zeros --arg out:i32[1]=zeros
// expect: out = 42
__global__ void handoff(int *data, volatile int *flag, int *out)
{
    if (threadIdx.x != 0) {
        return;
    }
    if (blockIdx.x == 0) {
        data[0] = 42;
        __threadfence();
        *flag = 1;
    } else {
        while (*flag == 0) {
        }
        __threadfence();
        out[0] = data[0];
    }
}
