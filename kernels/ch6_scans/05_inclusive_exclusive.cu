// FIXED: inclusive ⇄ exclusive conversion, out of place, keeping the last element.
// Thread mapping: thread i = blockIdx.x · blockDim.x + threadIdx.x writes element i.
// Shared memory: none.
// Launch: ⌈n / blockDim⌉ blocks × any block.

// ANCHOR: to_exclusive
extern "C" __global__ void inclusive_to_exclusive(const unsigned int *inclusive, unsigned int *exclusive,
                                                  unsigned int n)
{
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        exclusive[i] = i == 0 ? 0 : inclusive[i - 1]; // shift right; inclusive[n - 1], the total, drops out
    }
}
// ANCHOR_END: to_exclusive

// ANCHOR: to_inclusive
extern "C" __global__ void exclusive_to_inclusive(const unsigned int *exclusive, const unsigned int *in,
                                                  unsigned int *inclusive, unsigned int n)
{
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i + 1 < n) {
        inclusive[i] = exclusive[i + 1]; // shift left …
    } else if (i + 1 == n) {
        inclusive[i] = exclusive[i] + in[i]; // … and the total, which no exclusive element holds
    }
}
// ANCHOR_END: to_inclusive
