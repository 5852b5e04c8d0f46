// FIXED: y = a·x + y with the kernel inside a namespace, as libraries organise their kernels;
// `--entry blas::saxpy` names it. The grid-stride loop covers any n with any grid.
// Thread mapping: thread t handles t, t + stride, t + 2·stride, …
// Shared memory: none.
// Launch: any.
namespace blas {

__global__ void saxpy(int n, float a, const float *x, float *y)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
        y[i] = a * x[i] + y[i];
    }
}

} // namespace blas
