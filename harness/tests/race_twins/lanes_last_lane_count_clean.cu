// TWIN(clean): intra-warp — the same count with __syncwarp() between the lanes' atomicAdd and
// lane 31's read: every lane's addition is ordered before the read, on every schedule and on a
// GPU. Twin: lanes_last_lane_count_racy.cu.
// check: --entry count --grid 2 --block 128 --arg in:i32[256]=iota --arg out:i32[8]=zeros
// expect: out = 48
__global__ void count(const int *in, int *out)
{
    __shared__ int total[4];
    int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    if (lane == 0) {
        total[warp] = 0;
    }
    __syncwarp();
    atomicAdd(&total[warp], in[blockIdx.x * blockDim.x + threadIdx.x] % 2 + 1);
    __syncwarp();
    if (lane == 31) {
        out[blockIdx.x * 4 + warp] = total[warp];
    }
}
