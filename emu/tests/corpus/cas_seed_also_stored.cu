// BROKEN(race): the CAS loop's plain read is also stored in seen[i] — fixed in cas_add_double.cu
// Thread mapping: one element per thread; every thread adds x[i] into sum[0].
// Shared memory: none.
// Launch: any grid × block; seen has n elements.

extern "C" __global__ void cas_seed_also_stored(const double *x, double *sum, double *seen, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        unsigned long long int *address_as_ull = (unsigned long long int *)sum;
        unsigned long long int old = *address_as_ull, assumed; // BUG: its value also goes to seen[i]
        seen[i] = __longlong_as_double(old);
        do {
            assumed = old;
            old = atomicCAS(address_as_ull, assumed,
                            __double_as_longlong(x[i] + __longlong_as_double(assumed)));
        } while (assumed != old);
    }
}
