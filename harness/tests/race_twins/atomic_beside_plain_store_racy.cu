// TWIN(racy): an atomic beside a plain store, inter-block — block 0 adds to a total with
// atomicAdd, block 1 stores its own value to it with a plain store: whether block 0's addition
// survives depends on which lands last. Twin: atomic_beside_store_clean.cu.
// check: --entry contribute --grid 2 --block 32 --arg total:i32[1]=zeros
// why: different blocks
// ptx: racy
// gpu: outputs
__global__ void contribute(int *total)
{
    if (threadIdx.x != 0) {
        return;
    }
    if (blockIdx.x == 0) {
        atomicAdd(total, 1); // RACE
    } else {
        *total = 2; // RACE
    }
}
