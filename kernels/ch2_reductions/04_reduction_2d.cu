// FIXED: 2D reduction: a 2D grid of 2D blocks walks a row-major matrix; the block's threads share one linear array.
// Thread mapping: (col, row) from the x and y axes, each with its own grid stride; thread t = threadIdx.y·blockDim.x + threadIdx.x in the tree.
// Shared memory: one float per thread, linearised (1024 floats, 4 KiB, the largest block).
// Launch: any 2D grid × a 2D block of a power-of-two number of threads up to 1024; block_sums has one float per block, added on the host.

#define MAX_THREADS 1024

// ANCHOR: kernel
extern "C" __global__ void reduction_2d(const float *a, unsigned int rows, unsigned int cols,
                                        float *block_sums)
{
    __shared__ float s[MAX_THREADS];
    unsigned int t = threadIdx.y * blockDim.x + threadIdx.x;
    // ANCHOR: strides
    unsigned int stride_x = blockDim.x * gridDim.x;
    unsigned int stride_y = blockDim.y * gridDim.y;
    float sum = 0.0f;
    for (unsigned int row = blockIdx.y * blockDim.y + threadIdx.y; row < rows; row += stride_y) {
        for (unsigned int col = blockIdx.x * blockDim.x + threadIdx.x; col < cols; col += stride_x) {
            sum += a[row * cols + col];
        }
    }
    // ANCHOR_END: strides
    s[t] = sum;
    __syncthreads();

    for (unsigned int i = blockDim.x * blockDim.y / 2; i > 0; i >>= 1) {
        if (t < i) {
            s[t] += s[t + i];
        }
        __syncthreads();
    }
    if (t == 0) {
        block_sums[blockIdx.y * gridDim.x + blockIdx.x] = s[0];
    }
}
// ANCHOR_END: kernel
