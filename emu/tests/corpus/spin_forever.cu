// BROKEN(hang): waits for a flag nobody sets.
// Thread mapping: every thread spins.
// Shared memory: none.
// Launch: any.

extern "C" __global__ void spin_forever(volatile int *flag)
{
    while (flag[0] == 0) { // BUG: nothing ever sets the flag
    }
}
