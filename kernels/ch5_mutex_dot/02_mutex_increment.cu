// FIXED: one thread per block increments a counter under the mutex of 01_lock_unlock.cu.
// Thread mapping: thread 0 of every block takes the lock, adds one to x[0], releases it.
// Shared memory: none.
// Launch: any grid × block; x[0] ends at gridDim.x. Only one thread per block spins, which is safe on every GPU.

struct Lock {
    int *mutex;

    __device__ void lock()
    {
        while (atomicCAS(mutex, 0, 1) != 0) {
        }
        __threadfence();
    }

    __device__ void unlock()
    {
        __threadfence();
        atomicExch(mutex, 0);
    }
};

// ANCHOR: kernel
extern "C" __global__ void mutex_increment(int *mutex, int *x)
{
    if (threadIdx.x == 0) {
        Lock block_lock{mutex};
        block_lock.lock();
        x[0] = x[0] + 1;
        block_lock.unlock();
    }
}
// ANCHOR_END: kernel
