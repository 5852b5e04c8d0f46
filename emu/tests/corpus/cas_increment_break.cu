// FIXED: a counter incremented by a CAS loop that retries until its CAS sticks (`break` form).
// Thread mapping: one thread per unit of work; every thread adds 1 to count[0].
// Shared memory: none.
// Launch: any grid × block; count[0] ends at the number of threads.

extern "C" __global__ void cas_increment_break(int *count)
{
    int old = *count;
    while (true) {
        int assumed = old;
        old = atomicCAS(count, assumed, assumed + 1);
        if (old == assumed) {
            break;
        }
    }
}
