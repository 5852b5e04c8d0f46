// BROKEN(race): a lock taken by reading then writing: two threads can both see it free — fixed in 02_mutex_increment.cu
// Thread mapping: thread 0 of every block takes the "lock", adds one to x[0], releases it.
// Shared memory: none.
// Launch: any grid × block; x[0] should end at gridDim.x. volatile makes every test reread memory, so no thread spins forever.

// ANCHOR: kernel
extern "C" __global__ void read_then_write_lock(volatile int *mutex, int *x)
{
    if (threadIdx.x == 0) {
        while (*mutex != 0) {
        }
        *mutex = 1; // between the read above and this write, another block may have taken it too
        x[0] = x[0] + 1; // BUG: two blocks that both saw the lock free add at once, and one update is lost
        *mutex = 0;
    }
}
// ANCHOR_END: kernel
