// TWIN(clean): inter-warp, block scope — atomicAdd_block is enough when every thread that touches
// the word is in one block. Twin: atomic_inter_warp_racy.cu.
// check: --entry count --grid 1 --block 64 --arg counter:i32[1]=zeros
// expect: counter = 2
__global__ void count(int *counter)
{
    if (threadIdx.x % 32 == 0) {
        atomicAdd_block(counter, 1);
    }
}
