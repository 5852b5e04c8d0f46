// FIXED: __syncwarp() between the lanes' atomicAdd and lane 31's read orders every lane's
// addition before the read, however the warp's lanes are scheduled.
// Thread mapping: thread i tests in[i], in[i + stride], … (grid-stride); lane 31 of each warp
// writes its warp's count to counts[global warp index].
// Shared memory: one counter per warp of the block (at most 32).
// Launch: any grid; blockDim.x a multiple of 32, up to 1024.
// ANCHOR: kernel
extern "C" __global__ void warp_count(const float *in, unsigned int n, float threshold,
                                      unsigned int *counts)
{
    __shared__ unsigned int warp_total[32];
    unsigned int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    if (lane == 0) {
        warp_total[warp] = 0;
    }
    __syncwarp();
    unsigned int mine = 0;
    for (unsigned int i = blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += gridDim.x * blockDim.x) {
        mine += in[i] > threshold;
    }
    atomicAdd(&warp_total[warp], mine);
    __syncwarp();
    if (lane == 31) {
        counts[blockIdx.x * (blockDim.x / 32) + warp] = warp_total[warp];
    }
}
// ANCHOR_END: kernel
