// BROKEN(wrong result): 32 × 32 tiles on ⌊width / 32⌋ × ⌊height / 32⌋ blocks: when 32 does not divide a side, the cells past the last whole tile are never computed — fixed in 01_step_double_buffer.cu
// Thread mapping: thread (x, y) = blockIdx · 32 + threadIdx owns cell (x, y); blocks of exactly 32 × 32.
// Shared memory: none.
// Launch: ⌊width / 32⌋ × ⌊height / 32⌋ blocks of 32 × 32 threads, once per generation: right only when 32 divides both sides.

#define TILE 32

// ANCHOR: kernel
extern "C" __global__ void life_step_floor_blocks(const unsigned char *in, unsigned char *out,
                                                  unsigned int width, unsigned int height)
{
    // No bounds check: with width / 32 blocks across, no thread lands past the board.
    unsigned int x = blockIdx.x * TILE + threadIdx.x; // BUG: width / 32 rounds down, so the last width % 32 columns (and height % 32 rows) get no thread at all
    unsigned int y = blockIdx.y * TILE + threadIdx.y;
    unsigned int left = x == 0 ? width - 1 : x - 1, right = x == width - 1 ? 0 : x + 1;
    unsigned int up = y == 0 ? height - 1 : y - 1, down = y == height - 1 ? 0 : y + 1;
    const unsigned char *above = in + up * width, *row = in + y * width, *below = in + down * width;
    unsigned int alive = above[left] + above[x] + above[right]
                       + row[left]              + row[right]
                       + below[left] + below[x] + below[right];
    out[y * width + x] = alive == 3 || (row[x] && alive == 2);
}
// ANCHOR_END: kernel
