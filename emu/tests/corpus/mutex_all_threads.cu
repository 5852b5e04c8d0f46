// FIXED: every thread increments a counter under one mutex; needs independent thread scheduling.
// Thread mapping: every thread of every block takes the lock once.
// Shared memory: none.
// Launch: any grid × block; x[0] ends at gridDim.x * blockDim.x.

extern "C" __global__ void mutex_all_threads(int *mutex, int *x)
{
    bool done = false;
    while (!done) {
        if (atomicCAS(mutex, 0, 1) == 0) {
            __threadfence();
            x[0] = x[0] + 1;
            __threadfence();
            atomicExch(mutex, 0);
            done = true;
        }
    }
}
