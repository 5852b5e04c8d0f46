// TWIN(clean): intra-warp, full mask — __syncwarp() over the whole warp orders every lane's
// write before every lane's read. Twin: syncwarp_partial_mask_racy.cu.
// check: --entry swap_halves --grid 1 --block 32 --arg out:i32[32]=zeros
// expect: out = 16
__global__ void swap_halves(int *out)
{
    __shared__ int buf[32];
    int lane = threadIdx.x % 32;
    buf[lane] = lane;
    __syncwarp();
    out[lane] = buf[lane ^ 16];
}
