// TWIN(racy): volatile data, inter-warp — lane 0 of each warp stores its warp's number to one
// volatile word, with nothing ordering the two stores: which one is left depends on timing.
// Twin: volatile_stores_clean.cu.
// check: --entry last_writer --grid 1 --block 64 --arg winner:i32[1]=zeros
// why: volatile
// ptx: clean
__global__ void last_writer(volatile int *winner)
{
    if (threadIdx.x % 32 == 0) {
        *winner = threadIdx.x / 32 + 1; // RACE
    }
}
