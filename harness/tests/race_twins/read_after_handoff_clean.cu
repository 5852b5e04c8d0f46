// TWIN(clean): read-after-handoff, inter-block — block 0 waits for block 1's acknowledgement
// before it overwrites the data it handed over. Twin: read_after_handoff_racy.cu.
// check: --entry handoff --grid 2 --block 32 --arg data:i32[1]=zeros --arg flag:i32[1]=zeros --arg ack:i32[1]=zeros --arg out:i32[1]=zeros
// expect: out = 1
__global__ void handoff(volatile int *data, volatile int *flag, volatile int *ack, int *out)
{
    if (threadIdx.x != 0) {
        return;
    }
    if (blockIdx.x == 0) {
        data[0] = 1;
        __threadfence();
        *flag = 1;
        while (*ack == 0) {
        }
        __threadfence();
        data[0] = 2;
    } else {
        while (*flag == 0) {
        }
        __threadfence();
        out[0] = data[0];
        __threadfence();
        *ack = 1;
    }
}
