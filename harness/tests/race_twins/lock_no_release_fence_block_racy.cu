// TWIN(racy): lock without a release fence, inter-warp, block scope — lane 0 of each of a block's
// two warps takes a block-scoped spin lock (atomicCAS_block) and fences after taking it, records
// itself in a volatile word and counts its visit, then frees the lock with atomicExch_block and no
// __threadfence_block() before it. Twin: lock_no_release_fence_block_clean.cu.
// check: --entry record --grid 1 --block 64 --arg mutex:i32[1]=zeros --arg last:i32[1]=zeros --arg visits:i32[1]=zeros
// why: volatile
// ptx: clean
// gpu: outputs
__global__ void record(int *mutex, volatile int *last, volatile int *visits)
{
    if (threadIdx.x % 32 != 0) {
        return;
    }
    while (atomicCAS_block(mutex, 0, 1) != 0) {
    }
    __threadfence_block();
    *last = threadIdx.x / 32 + 1; // RACE
    *visits = *visits + 1; // RACE
    atomicExch_block(mutex, 0);
}
