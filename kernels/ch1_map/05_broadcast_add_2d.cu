// FIXED: out[r][c] = col[r] + row[c]: a column and a row broadcast to a rows × cols matrix.
// Thread mapping: a 2D grid of 2D blocks, one thread per element of out: x picks the column, y the row.
// Shared memory: none.
// Launch: ceil(cols / blockDim.x) × ceil(rows / blockDim.y) blocks of any 2D shape; out is row-major.

// ANCHOR: kernel
extern "C" __global__ void broadcast_add_2d(const float *col, const float *row, float *out,
                                            unsigned int rows, unsigned int cols)
{
    unsigned int c = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned int r = blockIdx.y * blockDim.y + threadIdx.y;
    if (r < rows && c < cols) {
        out[r * cols + c] = col[r] + row[c];
    }
}
// ANCHOR_END: kernel
