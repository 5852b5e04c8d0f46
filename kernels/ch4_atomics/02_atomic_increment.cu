// FIXED: the read-modify-write of 01_racy_increment.cu made indivisible with atomicAdd.
// Thread mapping: every thread of every block adds one to the same counter, x[0].
// Shared memory: none.
// Launch: any grid × block; x[0] ends at gridDim.x * blockDim.x.

// ANCHOR: kernel
extern "C" __global__ void atomic_increment(int *x)
{
    atomicAdd(&x[0], 1);
}
// ANCHOR_END: kernel
