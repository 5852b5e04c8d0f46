// FIXED: each block stages its 16 × 16 cells and the one-cell halo around them (0 past the grid's edges) in shared memory, then every thread adds its cell and its four neighbours from the tile.
// Thread mapping: thread (x, y) = blockIdx · 16 + threadIdx owns cell (x, y) and loads it into tile[ty + 1][tx + 1];
//                 the threads on the block's edges also load the halo cell beyond them (no corners: the stencil has none).
// Shared memory: an 18 × 18 tile of unsigned ints (1.3 KiB): the block's cells and a one-cell halo.
// Launch: blocks of exactly 16 × 16; grid ⌈width / 16⌉ × ⌈height / 16⌉; cells outside the grid count as 0.

#define TILE 16

// The cell at (x, y), or 0 outside the grid (x and y wrap to huge values below 0).
__device__ unsigned int cell(const unsigned int *in, unsigned int x, unsigned int y,
                             unsigned int width, unsigned int height)
{
    return x < width && y < height ? in[y * width + x] : 0;
}

// ANCHOR: kernel
extern "C" __global__ void stencil_halo(const unsigned int *in, unsigned int *out,
                                       unsigned int width, unsigned int height)
{
    __shared__ unsigned int tile[TILE + 2][TILE + 2];
    unsigned int tx = threadIdx.x, ty = threadIdx.y;
    unsigned int x = blockIdx.x * TILE + tx, y = blockIdx.y * TILE + ty;
    tile[ty + 1][tx + 1] = cell(in, x, y, width, height);
    // ANCHOR: halo
    if (tx == 0) {
        tile[ty + 1][0] = cell(in, x - 1, y, width, height);
    }
    if (tx == TILE - 1) {
        tile[ty + 1][TILE + 1] = cell(in, x + 1, y, width, height);
    }
    if (ty == 0) {
        tile[0][tx + 1] = cell(in, x, y - 1, width, height);
    }
    if (ty == TILE - 1) {
        tile[TILE + 1][tx + 1] = cell(in, x, y + 1, width, height);
    }
    // ANCHOR_END: halo
    __syncthreads();
    if (x < width && y < height) {
        unsigned int row = ty + 1, col = tx + 1;
        unsigned int neighbours = tile[row - 1][col] + tile[row + 1][col] + tile[row][col - 1] + tile[row][col + 1];
        out[y * width + x] = tile[row][col] + neighbours;
    }
}
// ANCHOR_END: kernel
