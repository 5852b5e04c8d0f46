// TWIN(racy): intra-warp, atomic then plain read — every lane of a warp adds its share into the
// warp's shared counter with atomicAdd, and lane 31 reads the total with no __syncwarp(),
// trusting it to add last. In lockstep it does (a warp's lanes run an instruction from lane 0
// up), so only the lanes schedule shows the race. Twin: lanes_last_lane_count_clean.cu.
// check: --entry count --grid 2 --block 128 --arg in:i32[256]=iota --arg out:i32[8]=zeros
// schedules: lanes
// why: __syncwarp() between them orders them
// ptx: racy
__global__ void count(const int *in, int *out)
{
    __shared__ int total[4];
    int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    if (lane == 0) {
        total[warp] = 0;
    }
    __syncwarp();
    atomicAdd(&total[warp], in[blockIdx.x * blockDim.x + threadIdx.x] % 2 + 1); // RACE
    if (lane == 31) {
        out[blockIdx.x * 4 + warp] = total[warp]; // RACE
    }
}
