// BROKEN(race): one generation updated in place: a thread overwrites its cell while its neighbours may still be reading it — fixed in 01_step_double_buffer.cu
// Thread mapping: thread (x, y) = blockIdx · blockDim + threadIdx owns cell (x, y); any 2D block.
// Shared memory: none.
// Launch: ⌈width / blockDim.x⌉ × ⌈height / blockDim.y⌉ blocks of any 2D block (16 × 16 here), once per generation.

// ANCHOR: kernel
extern "C" __global__ void life_step_in_place(unsigned char *board, unsigned int width,
                                              unsigned int height)
{
    unsigned int x = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= width || y >= height) {
        return;
    }
    unsigned int left = x == 0 ? width - 1 : x - 1, right = x == width - 1 ? 0 : x + 1;
    unsigned int up = y == 0 ? height - 1 : y - 1, down = y == height - 1 ? 0 : y + 1;
    unsigned char *above = board + up * width, *row = board + y * width, *below = board + down * width;
    unsigned int alive = above[left] + above[x] + above[right]
                       + row[left]              + row[right]
                       + below[left] + below[x] + below[right];
    row[x] = alive == 3 || (row[x] && alive == 2); // BUG: the eight neighbours read this cell too, and some may not have yet: they see the next generation mixed into this one
}
// ANCHOR_END: kernel
