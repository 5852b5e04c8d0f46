// TWIN(racy): volatile data outside a lock, inter-block — block 0 adds to a volatile total under
// a device-wide lock, block 1 adds to it without taking the lock: volatile makes each access
// whole, not the two threads' read-modify-writes ordered. Twin: volatile_under_lock_clean.cu.
// check: --entry add --grid 2 --block 32 --arg mutex:i32[1]=zeros --arg total:i32[1]=zeros
// why: volatile
// ptx: clean
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
    if (blockIdx.x == 0) {
        lock(mutex);
        *total = *total + 1; // RACE
        unlock(mutex);
    } else {
        *total = *total + 1; // RACE
    }
}
