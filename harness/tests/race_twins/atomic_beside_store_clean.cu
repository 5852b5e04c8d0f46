// TWIN(clean): atomics on both sides, inter-block — block 0 and block 1 both add to the total with
// atomicAdd, so neither contribution is lost whichever lands first.
// Twins: atomic_beside_volatile_store_racy.cu, atomic_beside_plain_store_racy.cu.
// check: --entry contribute --grid 2 --block 32 --arg total:i32[1]=zeros
// expect: total = 3
__global__ void contribute(int *total)
{
    if (threadIdx.x != 0) {
        return;
    }
    atomicAdd(total, blockIdx.x + 1);
}
