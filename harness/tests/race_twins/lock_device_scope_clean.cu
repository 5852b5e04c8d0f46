// TWIN(clean): lock, inter-block, device scope — atomicCAS and atomicExch with __threadfence()
// make a lock every block respects. Twin: lock_block_scope_racy.cu.
// check: --entry locked_count --grid 2 --block 32 --arg mutex:i32[1]=zeros --arg total:i32[1]=zeros
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

__global__ void locked_count(int *mutex, int *total)
{
    if (threadIdx.x == 0) {
        lock(mutex);
        *total += 1;
        unlock(mutex);
    }
}
