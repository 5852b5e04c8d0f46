// FIXED: one generation per launch, four cells a thread: the thread loads the three rows of six cells around its four once and slides a three-column sum along them.
// Thread mapping: thread (i, y), i = blockIdx.x * blockDim.x + threadIdx.x, owns cells 4i … 4i + 3 of row y (fewer at the end of a row whose width is not a multiple of four).
// Shared memory: none.
// Launch: ⌈⌈width / 4⌉ / blockDim.x⌉ × ⌈height / blockDim.y⌉ blocks of any 2D block, once per generation; the host swaps in and out.

#define CELLS 4

// ANCHOR: kernel
extern "C" __global__ void life_step_four_cells(const unsigned char *in, unsigned char *out,
                                                unsigned int width, unsigned int height)
{
    unsigned int first = CELLS * (blockIdx.x * blockDim.x + threadIdx.x);
    unsigned int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (first >= width || y >= height) {
        return;
    }
    unsigned int up = y == 0 ? height - 1 : y - 1, down = y == height - 1 ? 0 : y + 1;
    const unsigned char *above = in + up * width, *row = in + y * width, *below = in + down * width;
    // Columns first - 1 … first + 4, wrapping around the torus (more than once on a narrow board):
    // each column's three cells are loaded once and summed once.
    unsigned int centre[CELLS + 2], column[CELLS + 2];
    unsigned int x = first == 0 ? width - 1 : first - 1;
#pragma unroll
    for (int k = 0; k < CELLS + 2; ++k) {
        centre[k] = row[x];
        column[k] = above[x] + centre[k] + below[x];
        x = x == width - 1 ? 0 : x + 1;
    }
    // Cell first + j sees columns j, j + 1 and j + 2, less itself.
#pragma unroll
    for (int j = 0; j < CELLS; ++j) {
        if (first + j < width) {
            unsigned int alive = column[j] + column[j + 1] + column[j + 2] - centre[j + 1];
            out[y * width + first + j] = alive == 3 || (centre[j + 1] && alive == 2);
        }
    }
}
// ANCHOR_END: kernel
