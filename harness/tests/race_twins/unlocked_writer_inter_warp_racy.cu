// TWIN(racy): an unlocked writer beside a locked one, inter-warp, block scope — lane 0 of warp 0
// stores to a volatile word under a block-scoped lock (fenced on both sides); lane 0 of warp 1
// stores to it without taking the lock. Twin: unlocked_writer_inter_warp_clean.cu.
// check: --entry record --grid 1 --block 64 --arg mutex:i32[1]=zeros --arg last:i32[1]=zeros --arg visits:i32[1]=zeros
// why: volatile
// ptx: clean
// gpu: outputs
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
    if (threadIdx.x == 0) {
        lock(mutex);
        *last = 1; // RACE
        *visits = *visits + 1;
        unlock(mutex);
    } else {
        *last = 2; // RACE
    }
}
