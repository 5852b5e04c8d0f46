// TWIN(racy): fence, inter-warp — warp 0 publishes shared data behind a flag; warp 1 waits for the
// flag but reads the data with no fence after the wait, so its read may be served before the flag
// was seen. Twin: fence_inter_warp_clean.cu.
// check: --entry handoff --grid 1 --block 64 --arg in:i32[1]=const:42 --arg out:i32[1]=zeros
// why: no __syncthreads(), atomic or fence orders them
// ptx: racy
__global__ void handoff(const int *in, int *out)
{
    __shared__ int data;
    __shared__ volatile int flag;
    if (threadIdx.x == 0) {
        flag = 0;
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        data = in[0]; // RACE
        __threadfence_block();
        flag = 1;
    } else if (threadIdx.x == 32) {
        while (flag == 0) {
        }
        out[0] = data; // RACE
    }
}
