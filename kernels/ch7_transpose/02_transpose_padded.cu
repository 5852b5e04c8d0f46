// FIXED: out = inᵀ through a 32 × 33 shared tile: the extra column shifts each row by one bank, so a column of the tile spans all 32 banks and both the stores into the tile and the reads of its columns are conflict-free.
// Thread mapping: block (bx, by) of 32 × 8 threads transposes the 32 × 32 tile at rows 32·by, columns 32·bx of in;
//                 thread (tx, ty) loads rows ty, ty + 8, ty + 16, ty + 24 of it at column tx, then stores the same
//                 rows of the transposed tile.
// Shared memory: one 32 × 33 float tile (4.1 KiB); element (r, c) at word 33r + c, in bank (r + c) % 32.
// Launch: blocks of exactly 32 × 8; grid ⌈cols / 32⌉ × ⌈rows / 32⌉; in is rows × cols, out cols × rows, row-major.

#define TILE 32
#define ROWS 8

// ANCHOR: kernel
extern "C" __global__ void transpose_padded(const float *in, float *out, unsigned int rows,
                                           unsigned int cols)
{
    __shared__ float tile[TILE][TILE + 1]; // one spare column: row r starts in bank r
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
            // A warp reads a column of the tile: 32 words 33 apart, one in each bank.
            out[(y + j) * rows + x] = tile[threadIdx.x][threadIdx.y + j];
        }
    }
}
// ANCHOR_END: kernel
