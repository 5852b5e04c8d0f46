// TWIN(clean): intra-warp — the same hand-off with __syncwarp() after the tickets: every lane
// has published before any reads its neighbour. Twin: lanes_ticket_neighbour_racy.cu.
// check: --entry shift --grid 1 --block 64 --arg in:i32[64]=iota --arg out:i32[64]=zeros
// expect: out = 0
__global__ void shift(const int *in, int *out)
{
    __shared__ int value[64];
    __shared__ unsigned tickets[2];
    int t = threadIdx.x, lane = t % 32;
    value[t] = 0;
    if (lane == 0) {
        tickets[t / 32] = 0;
    }
    __syncwarp();
    value[t] = in[t] * 2;
    __threadfence_block();
    atomicAdd(&tickets[t / 32], 1u);
    __syncwarp();
    out[t] = lane > 0 ? value[t - 1] : 0;
}
