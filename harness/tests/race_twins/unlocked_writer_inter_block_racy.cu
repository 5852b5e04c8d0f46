// TWIN(racy): an unlocked writer beside a locked one, inter-block, device scope — block 0 stores
// to a volatile word under a device-wide lock (fenced on both sides); block 1 stores to it
// without taking the lock, so nothing orders the two stores. Twin: unlocked_writer_inter_block_clean.cu.
// check: --entry record --grid 2 --block 32 --arg mutex:i32[1]=zeros --arg last:i32[1]=zeros --arg visits:i32[1]=zeros
// why: volatile
// ptx: clean
// gpu: outputs
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
    if (blockIdx.x == 0) {
        lock(mutex);
        *last = 1; // RACE
        *visits = *visits + 1;
        unlock(mutex);
    } else {
        *last = 2; // RACE
    }
}
