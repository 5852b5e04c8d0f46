// TWIN(racy): release/acquire, inter-block, block vs device scope — block 0 publishes data with a
// block-scoped release store (cuda::atomic_ref at thread_scope_block: st.release.cta), block 1
// takes it with a block-scoped acquire load; neither reaches the other block.
// Twin: release_acquire_device_scope_clean.cu.
// check: --entry handoff --grid 2 --block 32 --arg data:i32[1]=zeros --arg flag:i32[1]=zeros --arg out:i32[1]=zeros
// why: block scope
// ptx: racy
#include <cuda/atomic>

__global__ void handoff(int *data, int *flag, int *out)
{
    cuda::atomic_ref<int, cuda::thread_scope_block> ready(*flag);
    if (threadIdx.x != 0) {
        return;
    }
    if (blockIdx.x == 0) {
        data[0] = 42; // RACE
        ready.store(1, cuda::memory_order_release); // RACE?
    } else {
        while (ready.load(cuda::memory_order_acquire) == 0) { // RACE?
        }
        out[0] = data[0]; // RACE
    }
}
