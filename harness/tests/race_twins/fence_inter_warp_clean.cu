// TWIN(clean): fence, inter-warp, block scope — within one block __threadfence_block() on both
// sides is a complete hand-off. Twin: fence_inter_warp_racy.cu.
// check: --entry handoff --grid 1 --block 64 --arg in:i32[1]=const:42 --arg out:i32[1]=zeros
// expect: out = 42
__global__ void handoff(const int *in, int *out)
{
    __shared__ int data;
    __shared__ volatile int flag;
    if (threadIdx.x == 0) {
        flag = 0;
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        data = in[0];
        __threadfence_block();
        flag = 1;
    } else if (threadIdx.x == 32) {
        while (flag == 0) {
        }
        __threadfence_block();
        out[0] = data;
    }
}
