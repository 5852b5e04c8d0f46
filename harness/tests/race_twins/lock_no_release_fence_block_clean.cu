// TWIN(clean): lock with both fences, inter-warp, block scope — as
// lock_no_release_fence_block_racy.cu, with __threadfence_block() before the atomicExch_block that
// frees the lock. Twin: lock_no_release_fence_block_racy.cu.
// check: --entry record --grid 1 --block 64 --arg mutex:i32[1]=zeros --arg last:i32[1]=zeros --arg visits:i32[1]=zeros
// expect: visits = 2
__global__ void record(int *mutex, volatile int *last, volatile int *visits)
{
    if (threadIdx.x % 32 != 0) {
        return;
    }
    while (atomicCAS_block(mutex, 0, 1) != 0) {
    }
    __threadfence_block();
    *last = threadIdx.x / 32 + 1;
    *visits = *visits + 1;
    __threadfence_block();
    atomicExch_block(mutex, 0);
}
