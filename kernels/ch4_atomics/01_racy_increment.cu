// BROKEN(race): lost updates — fixed in 02_atomic_increment.cu
// Thread mapping: every thread of every block adds one to the same counter, x[0].
// Shared memory: none.
// Launch: any grid × block; the walk-through uses 10 blocks of 16 threads and expects 160.

// ANCHOR: kernel
extern "C" __global__ void racy_increment(int *x)
{
    x[0] = x[0] + 1; // BUG: read, add, write: another thread's write between them is lost
}
// ANCHOR_END: kernel
