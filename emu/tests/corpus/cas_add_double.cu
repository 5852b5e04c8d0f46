// FIXED: atomicAdd for double built from atomicCAS, as the CUDA Programming Guide writes it.
// Thread mapping: one element per thread; every thread adds x[i] into sum[0].
// Shared memory: none.
// Launch: any grid × block; sum[0] ends at the sum of x[0..n).

__device__ double atomic_add_double(double *address, double val)
{
    unsigned long long int *address_as_ull = (unsigned long long int *)address;
    unsigned long long int old = *address_as_ull, assumed;
    do {
        assumed = old;
        old = atomicCAS(address_as_ull, assumed,
                        __double_as_longlong(val + __longlong_as_double(assumed)));
    } while (assumed != old);
    return __longlong_as_double(old);
}

extern "C" __global__ void cas_add_double(const double *x, double *sum, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        atomic_add_double(sum, x[i]);
    }
}
