// BROKEN(compile error): the seed's down-sweep as printed: it redeclares `j` and uses an undeclared `tid` — fixed in 02_blelloch_multi_launch.cu
// Thread mapping: at level d, thread j updates the pair ending at element (j + 1) · 2^(d+1) − 1.
// Shared memory: none.
// Launch: never: NVRTC refuses it, so both backends report HarnessError::Compile.

// ANCHOR: kernel
extern "C" __global__ void down_sweep(int *x, int d, int n)
{
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    int twod = 1 << d;
    int twod1 = twod * 2;
    int j = j * twod1; // BUG: `j` is declared a second time in the same scope
    if (j + twod1 - 1 < n) {
        int t = x[j + twod - 1];
        x[j + twod - 1] = x[j + twod1 - 1];
        x[j + twod1 - 1] += t;
    }
    if (tid == 0 && d == 0) {
        x[n - 1] = 0;
    }
}
// ANCHOR_END: kernel
