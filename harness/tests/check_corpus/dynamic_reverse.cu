// FIXED: reverses an array in place through dynamic shared memory, sized at launch (the third
// <<<>>> parameter; `check --shared BYTES`). Launched without it, every access is out of bounds.
// Thread mapping: thread t moves d[t] to d[n - 1 - t].
// Shared memory: n ints, dynamic (extern __shared__).
// Launch: 1 block of n threads, n * 4 bytes of dynamic shared memory.

__global__ void dynamic_reverse(int *d, int n)
{
    extern __shared__ int staged[];
    int t = threadIdx.x;
    staged[t] = d[t];
    __syncthreads();
    d[t] = staged[n - 1 - t];
}
