// BROKEN(race): the single-block loop on a grid of blocks: __syncthreads() waits for the threads of one block, not for the other blocks — fixed in 06_iterate_shared_halo.cu
// Thread mapping: thread (x, y) = blockIdx · blockDim + threadIdx owns cell (x, y); any 2D block.
// Shared memory: none (both boards are in global memory).
// Launch: ⌈width / blockDim.x⌉ × ⌈height / blockDim.y⌉ blocks: once there is more than one, blocks drift apart by generations.

// ANCHOR: kernel
extern "C" __global__ void __launch_bounds__(1024)
life_iterate_multi_block(unsigned char *board, unsigned char *scratch, unsigned int width,
                         unsigned int height, unsigned int generations)
{
    unsigned int x = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned int y = blockIdx.y * blockDim.y + threadIdx.y;
    bool on_board = x < width && y < height;
    unsigned int left = x == 0 ? width - 1 : x - 1, right = x == width - 1 ? 0 : x + 1;
    unsigned int up = y == 0 ? height - 1 : y - 1, down = y == height - 1 ? 0 : y + 1;
    unsigned char *from = board, *to = scratch;
    for (unsigned int generation = 0; generation < generations; ++generation) {
        if (on_board) {
            const unsigned char *above = from + up * width, *row = from + y * width, *below = from + down * width;
            unsigned int alive = above[left] + above[x] + above[right]
                               + row[left]              + row[right]
                               + below[left] + below[x] + below[right];
            to[y * width + x] = alive == 3 || (row[x] && alive == 2); // BUG: a cell on a block's edge is read by the next block, which this block's barrier does not wait for
        }
        __syncthreads();
        unsigned char *swap = from;
        from = to;
        to = swap;
    }
    if (on_board && from != board) {
        board[y * width + x] = from[y * width + x];
    }
}
// ANCHOR_END: kernel
