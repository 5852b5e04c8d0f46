// FIXED: clock64(), clock(), __nanosleep() and __activemask() as a timing loop uses them.
// Thread mapping: one thread per element of out.
// Shared memory: none.
// Launch: any; out[i] = 1 when time moved forward across the sleep, plus 2 when __activemask()
// named every lane that is present in the thread's warp.

extern "C" __global__ void clock_sleep(int *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) {
        return;
    }
    long long start = clock64();
    unsigned start32 = clock();
    unsigned long long wall_start;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(wall_start));
    __nanosleep(1000);
    long long stop = clock64();
    unsigned long long wall_stop;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(wall_stop));
    unsigned elapsed32 = clock() - start32;
    unsigned active = __activemask();
    int lane = threadIdx.x % 32;
    int warp_first = i - lane;
    int lanes_here = min(32, n - warp_first);
    int block_lanes = min(32, (int)blockDim.x - (int)(threadIdx.x - lane));
    lanes_here = min(lanes_here, block_lanes);
    unsigned expect = lanes_here == 32 ? 0xffffffffu : (1u << lanes_here) - 1u;
    out[i] = (stop > start && elapsed32 > 0 && wall_stop >= wall_start ? 1 : 0) + (active == expect ? 2 : 0);
}
