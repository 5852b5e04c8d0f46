// FIXED: out = inᵀ through a 32 × 32 shared tile, so both the global loads and the global stores are coalesced; but the tile's columns all fall in one bank: reading one is a 32-way bank conflict.
// Thread mapping: block (bx, by) of 32 × 8 threads transposes the 32 × 32 tile at rows 32·by, columns 32·bx of in;
//                 thread (tx, ty) loads rows ty, ty + 8, ty + 16, ty + 24 of it at column tx, then stores the same
//                 rows of the transposed tile.
// Shared memory: one 32 × 32 float tile (4 KiB); element (r, c) at word 32r + c, in bank c.
// Launch: blocks of exactly 32 × 8; grid ⌈cols / 32⌉ × ⌈rows / 32⌉; in is rows × cols, out cols × rows, row-major.

#define TILE 32
#define ROWS 8

// ANCHOR: kernel
extern "C" __global__ void transpose_shared(const float *in, float *out, unsigned int rows,
                                           unsigned int cols)
{
    __shared__ float tile[TILE][TILE];
    unsigned int x = blockIdx.x * TILE + threadIdx.x;
    unsigned int y = blockIdx.y * TILE + threadIdx.y;
    for (unsigned int j = 0; j < TILE; j += ROWS) {
        if (x < cols && y + j < rows) {
            tile[threadIdx.y + j][threadIdx.x] = in[(y + j) * cols + x];
        }
    }
    __syncthreads();
    // The transposed tile: this block's output starts at row 32·bx, column 32·by of out.
    x = blockIdx.y * TILE + threadIdx.x;
    y = blockIdx.x * TILE + threadIdx.y;
    for (unsigned int j = 0; j < TILE; j += ROWS) {
        if (x < rows && y + j < cols) {
            // A warp reads a column of the tile: 32 words 32 apart, all in one bank.
            out[(y + j) * rows + x] = tile[threadIdx.x][threadIdx.y + j];
        }
    }
}
// ANCHOR_END: kernel
