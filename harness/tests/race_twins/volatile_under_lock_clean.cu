// TWIN(clean): volatile data under a lock, inter-block — both blocks take the lock before they add
// to the volatile total. Twin: volatile_outside_lock_racy.cu.
// check: --entry add --grid 2 --block 32 --arg mutex:i32[1]=zeros --arg total:i32[1]=zeros
// expect: total = 2
__device__ void lock(int *mutex)
{
    while (atomicCAS(mutex, 0, 1) != 0) {
    }
    __threadfence();
}

__device__ void unlock(int *mutex)
{
    __threadfence();
    atomicExch(mutex, 0);
}

__global__ void add(int *mutex, volatile int *total)
{
    if (threadIdx.x != 0) {
        return;
    }
    lock(mutex);
    *total = *total + 1;
    unlock(mutex);
}
