// BROKEN(assert): a kernel that checks its input with <cassert> and reports progress with
// <cstdio>, the standard headers NVRTC does not ship; given a negative value, its assert fails.
// Thread mapping: one element per thread.
// Shared memory: none.
// Launch: at least n threads.
#include <cassert>
#include <cstdio>

__global__ void check_positive(const int *x, int n)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        if (i == 0) {
            printf("checking %d values\n", n);
        }
        assert(x[i] >= 0); // BUG: fails for the negative values it is given
    }
}
