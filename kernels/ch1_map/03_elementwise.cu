// FIXED: c = a + b, a - b, a * b and a / b element by element, one kernel per operator.
// Thread mapping: one thread per element, as in 02_scalar_multiply.cu.
// Shared memory: none.
// Launch: ceil(n / blockDim.x) blocks of any size.

// ANCHOR: add
extern "C" __global__ void elementwise_add(const float *a, const float *b, float *c, unsigned int n)
{
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        c[i] = a[i] + b[i];
    }
}
// ANCHOR_END: add

extern "C" __global__ void elementwise_sub(const float *a, const float *b, float *c, unsigned int n)
{
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        c[i] = a[i] - b[i];
    }
}

extern "C" __global__ void elementwise_mul(const float *a, const float *b, float *c, unsigned int n)
{
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        c[i] = a[i] * b[i];
    }
}

// ANCHOR: div
extern "C" __global__ void elementwise_div(const float *a, const float *b, float *c, unsigned int n)
{
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        c[i] = a[i] / b[i];
    }
}
// ANCHOR_END: div
