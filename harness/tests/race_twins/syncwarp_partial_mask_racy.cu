// TWIN(racy): intra-warp, partial mask — each half of the warp syncs only its own half with
// __syncwarp(half), then reads a lane of the other half, which nothing has ordered.
// Twin: syncwarp_partial_mask_clean.cu.
// check: --entry swap_halves --grid 1 --block 32 --arg out:i32[32]=zeros
// why: no __syncthreads(), atomic or fence orders them
// ptx: racy
__global__ void swap_halves(int *out)
{
    __shared__ int buf[32];
    int lane = threadIdx.x % 32;
    unsigned half = lane < 16 ? 0x0000ffffu : 0xffff0000u;
    buf[lane] = lane; // RACE
    __syncwarp(half);
    out[lane] = buf[lane ^ 16]; // RACE
}
