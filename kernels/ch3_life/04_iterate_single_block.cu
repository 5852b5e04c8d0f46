// FIXED: many generations in one launch of one block: a __syncthreads() between generations, and two boards that swap roles each generation.
// Thread mapping: thread (threadIdx.x, threadIdx.y) owns cell (x, y): the block is the board, so width × height ≤ 1024.
// Shared memory: none (both boards are in global memory).
// Launch: 1 block of width × height threads; the result ends in `board`, `scratch` is overwritten.

// ANCHOR: kernel
// A block of up to 1024 threads may use at most 64 registers a thread (65,536 in all): the bound
// makes the compiler keep to that, else the driver may refuse the largest boards.
extern "C" __global__ void __launch_bounds__(1024)
life_iterate_single_block(unsigned char *board, unsigned char *scratch, unsigned int generations)
{
    unsigned int width = blockDim.x, height = blockDim.y;
    unsigned int x = threadIdx.x, y = threadIdx.y;
    unsigned int left = x == 0 ? width - 1 : x - 1, right = x == width - 1 ? 0 : x + 1;
    unsigned int up = y == 0 ? height - 1 : y - 1, down = y == height - 1 ? 0 : y + 1;
    unsigned char *from = board, *to = scratch;
    for (unsigned int generation = 0; generation < generations; ++generation) {
        const unsigned char *above = from + up * width, *row = from + y * width, *below = from + down * width;
        unsigned int alive = above[left] + above[x] + above[right]
                           + row[left]              + row[right]
                           + below[left] + below[x] + below[right];
        to[y * width + x] = alive == 3 || (row[x] && alive == 2);
        // Every cell of the new generation is written before anyone reads it, and every read
        // of the old one is done before the next generation overwrites it.
        __syncthreads();
        unsigned char *swap = from;
        from = to;
        to = swap;
    }
    if (from != board) {
        board[y * width + x] = from[y * width + x];
    }
}
// ANCHOR_END: kernel
