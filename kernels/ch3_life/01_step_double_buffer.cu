// FIXED: one generation per launch, double-buffered: every thread reads board `in` and writes board `out`; the host swaps them between launches.
// Thread mapping: thread (x, y) = blockIdx · blockDim + threadIdx owns cell (x, y); any 2D block.
// Shared memory: none.
// Launch: ⌈width / blockDim.x⌉ × ⌈height / blockDim.y⌉ blocks of any 2D block (16 × 16 here), once per generation.

// ANCHOR: kernel
extern "C" __global__ void life_step(const unsigned char *in, unsigned char *out,
                                     unsigned int width, unsigned int height)
{
    unsigned int x = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned int y = blockIdx.y * blockDim.y + threadIdx.y;
    // The grid is rounded up to whole blocks, so the last ones reach past the board.
    if (x >= width || y >= height) {
        return;
    }
    // The board is a torus: column 0's left neighbour is the last column, row 0's upper is the last row.
    unsigned int left = x == 0 ? width - 1 : x - 1, right = x == width - 1 ? 0 : x + 1;
    unsigned int up = y == 0 ? height - 1 : y - 1, down = y == height - 1 ? 0 : y + 1;
    const unsigned char *above = in + up * width, *row = in + y * width, *below = in + down * width;
    unsigned int alive = above[left] + above[x] + above[right]
                       + row[left]              + row[right]
                       + below[left] + below[x] + below[right];
    out[y * width + x] = alive == 3 || (row[x] && alive == 2);
}
// ANCHOR_END: kernel
