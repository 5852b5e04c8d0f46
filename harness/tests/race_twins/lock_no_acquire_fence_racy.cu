// TWIN(racy): lock without an acquire fence, inter-block, device scope — thread 0 of each block
// spins on atomicCAS to take a device-wide lock, counts into a plain word, and frees the lock
// after a __threadfence(). The release is right, but a relaxed atomicCAS acquires only with a
// fence after it: nothing orders one holder's count before the next holder's read.
// Twin: lock_device_scope_clean.cu.
// check: --entry unfenced_count --grid 2 --block 32 --arg mutex:i32[1]=zeros --arg total:i32[1]=zeros
// why: fence after it
// ptx: racy
// gpu: outputs
__global__ void unfenced_count(int *mutex, int *total)
{
    if (threadIdx.x != 0) {
        return;
    }
    while (atomicCAS(mutex, 0, 1) != 0) {
    }
    *total += 1; // RACE
    __threadfence();
    atomicExch(mutex, 0);
}
