// TWIN(clean): every writer takes the lock, inter-warp, block scope — as
// unlocked_writer_inter_warp_racy.cu, with warp 1 taking the block-scoped lock for its store too.
// Twin: unlocked_writer_inter_warp_racy.cu.
// check: --entry record --grid 1 --block 64 --arg mutex:i32[1]=zeros --arg last:i32[1]=zeros --arg visits:i32[1]=zeros
// expect: visits = 2
__device__ void lock(int *mutex)
{
    while (atomicCAS_block(mutex, 0, 1) != 0) {
    }
    __threadfence_block();
}

__device__ void unlock(int *mutex)
{
    __threadfence_block();
    atomicExch_block(mutex, 0);
}

__global__ void record(int *mutex, volatile int *last, volatile int *visits)
{
    if (threadIdx.x % 32 != 0) {
        return;
    }
    lock(mutex);
    *last = threadIdx.x / 32 + 1;
    *visits = *visits + 1;
    unlock(mutex);
}
