// TWIN(clean): volatile data, inter-warp — both warps store the same value, so the word ends the
// same whichever lands last (as a "found" flag set by any thread that finds something).
// Twin: volatile_stores_racy.cu.
// check: --entry last_writer --grid 1 --block 64 --arg winner:i32[1]=zeros
// expect: winner = 1
__global__ void last_writer(volatile int *winner)
{
    if (threadIdx.x % 32 == 0) {
        *winner = 1;
    }
}
