// TWIN(clean): atomic, inter-block, device scope — atomicAdd is atomic towards every thread of the
// device, so the two blocks' increments never race. Twin: atomic_block_scope_racy.cu.
// check: --entry count --grid 2 --block 32 --arg counter:i32[1]=zeros
// expect: counter = 2
__global__ void count(int *counter)
{
    if (threadIdx.x == 0) {
        atomicAdd(counter, 1);
    }
}
