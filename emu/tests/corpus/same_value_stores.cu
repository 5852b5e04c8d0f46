// FIXED: every lane of a warp stores its warp's sum into the warp's slot, then the block reads
// the slots after a barrier: one store of one value per warp, which hardware lands as that value.
// Thread mapping: lane i of warp w adds the warp's values with shuffles, then writes slot[w].
// Shared memory: one int per warp.
// Launch: 1 block of 64 threads; out[t] is the sum of in[0..64].

extern "C" __global__ void same_value_stores(const int *in, int *out)
{
    __shared__ int slot[2];
    int t = threadIdx.x;
    int sum = in[t];
    for (int offset = 16; offset > 0; offset /= 2) {
        sum += __shfl_xor_sync(0xffffffffu, sum, offset);
    }
    slot[t / 32] = sum;
    __syncthreads();
    out[t] = slot[0] + slot[1];
}
