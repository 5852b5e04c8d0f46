// TWIN(clean): lock with both fences, inter-block, device scope — as
// lock_no_release_fence_device_racy.cu, with __threadfence() before the atomicExch that frees the
// lock: each holder's stores are released to the next. Twin: lock_no_release_fence_device_racy.cu.
// check: --entry record --grid 2 --block 32 --arg mutex:i32[1]=zeros --arg last:i32[1]=zeros --arg visits:i32[1]=zeros
// expect: visits = 2
__global__ void record(int *mutex, volatile int *last, volatile int *visits)
{
    if (threadIdx.x != 0) {
        return;
    }
    while (atomicCAS(mutex, 0, 1) != 0) {
    }
    __threadfence();
    *last = blockIdx.x + 1;
    *visits = *visits + 1;
    __threadfence();
    atomicExch(mutex, 0);
}
