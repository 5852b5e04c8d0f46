// BROKEN(wrong result): each block stages its 16 × 16 cells in shared memory but not the ring of cells around them, so the cells on a block's edge add neighbours nobody loaded — fixed in 02_stencil_halo.cu
// Thread mapping: thread (x, y) = blockIdx · 16 + threadIdx owns cell (x, y) and loads it into tile[ty + 1][tx + 1].
// Shared memory: an 18 × 18 tile of unsigned ints (1.3 KiB): the block's cells and a one-cell halo.
// Launch: blocks of exactly 16 × 16; grid ⌈width / 16⌉ × ⌈height / 16⌉; cells outside the grid count as 0.

#define TILE 16

// ANCHOR: kernel
extern "C" __global__ void stencil_no_halo(const unsigned int *in, unsigned int *out,
                                          unsigned int width, unsigned int height)
{
    __shared__ unsigned int tile[TILE + 2][TILE + 2];
    unsigned int tx = threadIdx.x, ty = threadIdx.y;
    unsigned int x = blockIdx.x * TILE + tx, y = blockIdx.y * TILE + ty;
    bool inside = x < width && y < height;
    tile[ty + 1][tx + 1] = inside ? in[y * width + x] : 0;
    __syncthreads();
    if (inside) {
        unsigned int row = ty + 1, col = tx + 1;
        unsigned int neighbours = tile[row - 1][col] + tile[row + 1][col] + tile[row][col - 1] + tile[row][col + 1]; // BUG: the ring around the tile was never loaded
        out[y * width + x] = tile[row][col] + neighbours;
    }
}
// ANCHOR_END: kernel
