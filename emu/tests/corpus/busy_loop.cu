// FIXED: a long loop that only computes in registers before its one store: slow, not stuck.
// Thread mapping: one thread per element of out.
// Shared memory: none.
// Launch: any; out[i] = the state of a 32-bit xorshift generator seeded with i + 1, after steps rounds.

extern "C" __global__ void busy_loop(unsigned *out, int n, int steps)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) {
        return;
    }
    unsigned x = i + 1;
    for (int s = 0; s < steps; ++s) {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
    }
    out[i] = x;
}
