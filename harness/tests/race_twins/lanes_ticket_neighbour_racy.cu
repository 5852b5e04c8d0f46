// TWIN(racy): intra-warp, fence and atomic — each lane publishes a value in shared memory,
// fences, and takes a ticket with atomicAdd; then it reads its lower neighbour's value,
// trusting that the neighbour's ticket came first. In lockstep it does (lane l's atomic
// acquires what lanes 0 to l − 1 released), so only the lanes schedule shows the race: a lane
// may take its ticket before its neighbour publishes. Twin: lanes_ticket_neighbour_clean.cu.
// check: --entry shift --grid 1 --block 64 --arg in:i32[64]=iota --arg out:i32[64]=zeros
// schedules: lanes
// why: __syncwarp() between them orders them
// ptx: racy
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
    value[t] = in[t] * 2; // RACE
    __threadfence_block();
    atomicAdd(&tickets[t / 32], 1u);
    out[t] = lane > 0 ? value[t - 1] : 0; // RACE
}
