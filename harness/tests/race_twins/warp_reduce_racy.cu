// TWIN(racy): intra-warp, volatile data — the legacy warp-synchronous reduction: the last 32
// threads add through a volatile shared array with no __syncwarp(), trusting the warp to run in
// lockstep, which it need not since Volta. Twin: warp_reduce_clean.cu.
// check: --entry reduce --grid 1 --block 64 --arg in:f32[64]=iota --arg out:f32[1]=zeros
// why: __syncwarp() between the steps orders them
// ptx: clean
__device__ void warp_reduce(volatile float *s, int t)
{
    s[t] += s[t + 32]; // RACE?
    s[t] += s[t + 16]; // RACE
    s[t] += s[t + 8]; // RACE
    s[t] += s[t + 4]; // RACE
    s[t] += s[t + 2]; // RACE
    s[t] += s[t + 1]; // RACE
}

__global__ void reduce(const float *in, float *out)
{
    __shared__ float s[64];
    s[threadIdx.x] = in[threadIdx.x];
    __syncthreads();
    if (threadIdx.x < 32) {
        warp_reduce(s, threadIdx.x); // RACE?
    }
    if (threadIdx.x == 0) {
        out[0] = s[0];
    }
}
