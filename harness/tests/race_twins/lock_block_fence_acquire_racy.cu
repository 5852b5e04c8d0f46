// TWIN(racy): lock whose acquire fence has block scope, inter-block — as
// lock_no_acquire_fence_racy.cu, with __threadfence_block() after the spin: a block-scope fence
// acquires only what the thread's own block released, and the last holder was another block.
// Twin: lock_device_scope_clean.cu.
// check: --entry block_fenced_count --grid 2 --block 32 --arg mutex:i32[1]=zeros --arg total:i32[1]=zeros
// why: different blocks
// ptx: racy
// gpu: outputs
__global__ void block_fenced_count(int *mutex, int *total)
{
    if (threadIdx.x != 0) {
        return;
    }
    while (atomicCAS(mutex, 0, 1) != 0) {
    }
    __threadfence_block();
    *total += 1; // RACE
    __threadfence();
    atomicExch(mutex, 0);
}
