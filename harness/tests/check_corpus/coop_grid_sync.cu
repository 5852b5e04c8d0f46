// BROKEN(launch): synchronises the whole grid with cooperative_groups::this_grid().sync(),
// which only a cooperative launch (cudaLaunchCooperativeKernel) allows; launched the ordinary
// way, a GPU traps at the sync. check refuses it and says so. Fixed in coop_groups.cu's style:
// one launch per phase, or per-block results combined by atomics.
// Thread mapping: one element per thread; thread 0 of the grid copies the total.
// Shared memory: none.
// Launch: cooperative only, every block resident at once.
#include <cooperative_groups.h>

namespace cg = cooperative_groups;

__global__ void grid_total(const int *in, int *total)
{
    cg::grid_group grid = cg::this_grid();
    atomicAdd(&total[0], in[grid.thread_rank()]);
    grid.sync(); // BUG: needs a cooperative launch
    if (grid.thread_rank() == 0) {
        total[1] = total[0];
    }
}
