// TWIN(clean): release/acquire, inter-block, device scope — the same hand-off with
// cuda::atomic_ref at thread_scope_device (st.release.gpu, ld.acquire.gpu) orders the data for
// the other block. Twin: release_acquire_block_scope_racy.cu.
// check: --entry handoff --grid 2 --block 32 --arg data:i32[1]=zeros --arg flag:i32[1]=zeros --arg out:i32[1]=zeros
// expect: out = 42
#include <cuda/atomic>

__global__ void handoff(int *data, int *flag, int *out)
{
    cuda::atomic_ref<int, cuda::thread_scope_device> ready(*flag);
    if (threadIdx.x != 0) {
        return;
    }
    if (blockIdx.x == 0) {
        data[0] = 42;
        ready.store(1, cuda::memory_order_release);
    } else {
        while (ready.load(cuda::memory_order_acquire) == 0) {
        }
        out[0] = data[0];
    }
}
