// TWIN(clean): intra-warp — the same reduction with __syncwarp() between each step's reads and
// its writes, and after the writes. Twin: warp_reduce_racy.cu.
// check: --entry reduce --grid 1 --block 64 --arg in:f32[64]=iota --arg out:f32[1]=zeros
// expect: out = 2016.0
__device__ void warp_reduce(volatile float *s, int t)
{
    float v = s[t];
    for (int k = 32; k > 0; k /= 2) {
        v += s[t + k];
        __syncwarp();
        s[t] = v;
        __syncwarp();
    }
}

__global__ void reduce(const float *in, float *out)
{
    __shared__ float s[64];
    s[threadIdx.x] = in[threadIdx.x];
    __syncthreads();
    if (threadIdx.x < 32) {
        warp_reduce(s, threadIdx.x);
    }
    if (threadIdx.x == 0) {
        out[0] = s[0];
    }
}
