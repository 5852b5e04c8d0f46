// TWIN(racy): inter-warp, plain — lane 0 of each of a block's two warps adds 1 to one word with a
// plain read-modify-write. Twin: atomic_inter_warp_clean.cu.
// check: --entry count --grid 1 --block 64 --arg counter:i32[1]=zeros
// why: no __syncthreads(), atomic or fence orders them
// ptx: racy
__global__ void count(int *counter)
{
    if (threadIdx.x % 32 == 0) {
        *counter += 1; // RACE
    }
}
