// TWIN(racy): atomic, inter-block, block vs device scope — thread 0 of each block counts into one
// word with atomicAdd_block, which is atomic only towards the threads of its own block.
// Twin: atomic_block_scope_clean.cu.
// check: --entry count --grid 2 --block 32 --arg counter:i32[1]=zeros
// why: block scope
// ptx: racy
__global__ void count(int *counter)
{
    if (threadIdx.x == 0) {
        atomicAdd_block(counter, 1); // RACE
    }
}
