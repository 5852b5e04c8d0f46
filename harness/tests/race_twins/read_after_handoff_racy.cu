// TWIN(racy): read-after-handoff, inter-block — block 0 publishes volatile data behind a flag,
// then overwrites the data at once; block 1's read of it after taking the flag is not ordered
// before the overwrite, so it may see either value. Twin: read_after_handoff_clean.cu.
// check: --entry handoff --grid 2 --block 32 --arg data:i32[1]=zeros --arg flag:i32[1]=zeros --arg ack:i32[1]=zeros --arg out:i32[1]=zeros
// why: volatile
// ptx: clean
__global__ void handoff(volatile int *data, volatile int *flag, volatile int *ack, int *out)
{
    if (threadIdx.x != 0) {
        return;
    }
    if (blockIdx.x == 0) {
        data[0] = 1;
        __threadfence();
        *flag = 1;
        data[0] = 2; // RACE
    } else {
        while (*flag == 0) {
        }
        __threadfence();
        out[0] = data[0]; // RACE
    }
}
