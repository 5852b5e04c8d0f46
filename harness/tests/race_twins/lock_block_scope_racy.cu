// TWIN(racy): lock, inter-block, block vs device scope — thread 0 of each block takes a spin lock
// with atomicCAS_block and releases it with atomicExch_block: both are atomic only within a block,
// so the two blocks can hold the lock together and their updates of the total race.
// Twin: lock_device_scope_clean.cu.
// check: --entry locked_count --grid 2 --block 32 --arg mutex:i32[1]=zeros --arg total:i32[1]=zeros
// why: block scope
// ptx: racy
__device__ void lock(int *mutex)
{
    while (atomicCAS_block(mutex, 0, 1) != 0) { // RACE
    }
    __threadfence_block();
}

__device__ void unlock(int *mutex)
{
    __threadfence_block();
    atomicExch_block(mutex, 0); // RACE?
}

__global__ void locked_count(int *mutex, int *total)
{
    if (threadIdx.x == 0) {
        lock(mutex); // RACE?
        *total += 1; // RACE
        unlock(mutex); // RACE?
    }
}
