// FIXED: a mutex built from atomicCAS and atomicExch, with fences, guarding a two-step critical section.
// Thread mapping: thread 0 of every block takes the lock, appends its block index to `order`, releases it.
// Shared memory: none.
// Launch: any grid × block; `order` has one slot per block and `*length` ends at gridDim.x.

// ANCHOR: lock
struct Lock {
    int *mutex;

    __device__ void lock()
    {
        while (atomicCAS(mutex, 0, 1) != 0) {
        }
        __threadfence(); // nothing inside may be seen before the lock is ours
    }

    __device__ void unlock()
    {
        __threadfence(); // everything inside is visible before the next holder gets in
        atomicExch(mutex, 0);
    }
};
// ANCHOR_END: lock

// ANCHOR: kernel
extern "C" __global__ void lock_unlock(int *mutex, unsigned int *order, unsigned int *length)
{
    if (threadIdx.x == 0) {
        Lock block_lock{mutex};
        block_lock.lock();
        unsigned int slot = *length;
        order[slot] = blockIdx.x;
        *length = slot + 1;
        block_lock.unlock();
    }
}
// ANCHOR_END: kernel
