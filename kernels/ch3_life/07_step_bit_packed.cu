// FIXED: one generation per launch on a bit-packed board: 32 cells in each 32-bit word, counted for all 32 at once with bitwise adders.
// Thread mapping: thread (x, y) = blockIdx · blockDim + threadIdx owns word x of row y: cells 32x .. 32x + 31,
//                 cell 32x + i in bit i. The board's width is a multiple of 32; words_per_row = width / 32.
// Shared memory: none.
// Launch: ⌈words_per_row / blockDim.x⌉ × ⌈height / blockDim.y⌉ blocks of any 2D block, once per generation.

// Each bit position is a separate column of a sum: a ^ b ^ c is its ones digit, the majority its carry.
__device__ void add3(unsigned int a, unsigned int b, unsigned int c, unsigned int &ones,
                     unsigned int &twos)
{
    ones = a ^ b ^ c;
    twos = (a & b) | (c & (a ^ b));
}

// ANCHOR: kernel
extern "C" __global__ void life_step_bit_packed(const unsigned int *in, unsigned int *out,
                                                unsigned int words_per_row, unsigned int height)
{
    unsigned int x = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= words_per_row || y >= height) {
        return;
    }
    unsigned int left = x == 0 ? words_per_row - 1 : x - 1;
    unsigned int right = x == words_per_row - 1 ? 0 : x + 1;
    unsigned int up = y == 0 ? height - 1 : y - 1, down = y == height - 1 ? 0 : y + 1;
    const unsigned int *above = in + up * words_per_row, *row = in + y * words_per_row,
                       *below = in + down * words_per_row;

    // West neighbours of the 32 cells: bit i of `west` is cell i - 1, bit 0 comes from the word on the left.
    unsigned int a = above[x], a_west = (a << 1) | (above[left] >> 31),
                 a_east = (a >> 1) | (above[right] << 31);
    unsigned int c = row[x], c_west = (c << 1) | (row[left] >> 31),
                 c_east = (c >> 1) | (row[right] << 31);
    unsigned int b = below[x], b_west = (b << 1) | (below[left] >> 31),
                 b_east = (b >> 1) | (below[right] << 31);

    // Eight neighbours, 0 to 8 in each bit column: ones + 2 * (how many of the four twos are set).
    unsigned int above_ones, above_twos, below_ones, below_twos, ones, twos;
    add3(a_west, a, a_east, above_ones, above_twos);
    add3(b_west, b, b_east, below_ones, below_twos);
    unsigned int side_ones = c_west ^ c_east, side_twos = c_west & c_east;
    add3(above_ones, side_ones, below_ones, ones, twos);
    // Exactly one of the four twos set: an odd count with no pair of them both set.
    unsigned int one_two = (above_twos ^ side_twos ^ below_twos ^ twos)
                         & ~((above_twos & side_twos) | (below_twos & twos));
    // 3 neighbours (2 + 1) make a cell alive; 2 (2 + 0) keep a live one alive.
    out[y * words_per_row + x] = one_two & (ones | c);
}
// ANCHOR_END: kernel
