// TWIN(racy): lock without a release fence, inter-block, device scope — thread 0 of each block
// takes a device-wide spin lock and fences after taking it, records itself in a volatile word and
// counts its visit, then frees the lock with atomicExch and no __threadfence() before it: the
// next holder's acquire orders it after the fence, not after the stores.
// Twin: lock_no_release_fence_device_clean.cu.
// check: --entry record --grid 2 --block 32 --arg mutex:i32[1]=zeros --arg last:i32[1]=zeros --arg visits:i32[1]=zeros
// why: volatile
// ptx: clean
// gpu: outputs
__global__ void record(int *mutex, volatile int *last, volatile int *visits)
{
    if (threadIdx.x != 0) {
        return;
    }
    while (atomicCAS(mutex, 0, 1) != 0) {
    }
    __threadfence();
    *last = blockIdx.x + 1; // RACE
    *visits = *visits + 1; // RACE
    atomicExch(mutex, 0);
}
