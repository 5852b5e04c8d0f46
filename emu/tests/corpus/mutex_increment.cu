// FIXED: one thread per block increments a counter under a mutex built from atomicCAS/atomicExch.
// Thread mapping: thread 0 of every block takes the lock, adds one, releases it.
// Shared memory: none.
// Launch: any grid × block; x[0] ends at gridDim.x.

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

extern "C" __global__ void mutex_increment(int *mutex, int *x)
{
    if (threadIdx.x == 0) {
        lock(mutex);
        x[0] = x[0] + 1;
        unlock(mutex);
    }
}
