// TWIN(clean): every writer takes the lock, inter-block, device scope — as
// unlocked_writer_inter_block_racy.cu, with block 1 taking the lock for its store too.
// Twin: unlocked_writer_inter_block_racy.cu.
// check: --entry record --grid 2 --block 32 --arg mutex:i32[1]=zeros --arg last:i32[1]=zeros --arg visits:i32[1]=zeros
// expect: visits = 2
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

__global__ void record(int *mutex, volatile int *last, volatile int *visits)
{
    if (threadIdx.x != 0) {
        return;
    }
    lock(mutex);
    *last = blockIdx.x + 1;
    *visits = *visits + 1;
    unlock(mutex);
}
