// FIXED: the bit-packed step with each thread walking down a strip of rows, so every word is loaded and summed across once instead of three times.
// Thread mapping: thread (x, s) = blockIdx · blockDim + threadIdx owns word x of rows 8s .. 8s + 7 (fewer in
//                 the last strip): cells 32x .. 32x + 31 of those rows, cell 32x + i in bit i. The board's
//                 width is a multiple of 32; words_per_row = width / 32.
// Shared memory: none.
// Launch: ⌈words_per_row / blockDim.x⌉ × ⌈⌈height / 8⌉ / blockDim.y⌉ blocks of any 2D block, once per generation.

#define STRIP 8

// The three cells in each bit column of a row's word and its two neighbours, as a 2-bit number per
// column: ones + 2 * twos.
__device__ void row_sum(const unsigned int *row, unsigned int x, unsigned int left,
                        unsigned int right, unsigned int &ones, unsigned int &twos,
                        unsigned int &centre)
{
    unsigned int c = row[x];
    unsigned int west = (c << 1) | (row[left] >> 31), east = (c >> 1) | (row[right] << 31);
    ones = west ^ c ^ east;
    twos = (west & c) | (east & (west ^ c));
    centre = c;
}

// ANCHOR: kernel
extern "C" __global__ void life_step_bit_packed_strips(const unsigned int *in, unsigned int *out,
                                                       unsigned int words_per_row,
                                                       unsigned int height)
{
    unsigned int x = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned int first = (blockIdx.y * blockDim.y + threadIdx.y) * STRIP;
    if (x >= words_per_row || first >= height) {
        return;
    }
    unsigned int left = x == 0 ? words_per_row - 1 : x - 1;
    unsigned int right = x == words_per_row - 1 ? 0 : x + 1;
    unsigned int last = min(first + STRIP, height);

    // Sums of the row above and of this row; each pass adds the row below and moves down one.
    unsigned int up_ones, up_twos, here_ones, here_twos, centre, unused;
    row_sum(in + (first == 0 ? height - 1 : first - 1) * words_per_row, x, left, right, up_ones,
            up_twos, unused);
    row_sum(in + first * words_per_row, x, left, right, here_ones, here_twos, centre);
    for (unsigned int y = first; y < last; ++y) {
        unsigned int down = y == height - 1 ? 0 : y + 1;
        unsigned int down_ones, down_twos, down_centre;
        row_sum(in + down * words_per_row, x, left, right, down_ones, down_twos, down_centre);

        // The nine cells around and including each cell: ones + 2 * (count of four twos), 0 to 9.
        unsigned int ones = up_ones ^ here_ones ^ down_ones;
        unsigned int carry = (up_ones & here_ones) | (down_ones & (up_ones ^ here_ones));
        unsigned int p = up_twos ^ here_twos, p_both = up_twos & here_twos;
        unsigned int q = down_twos ^ carry, q_both = down_twos & carry;
        unsigned int one_two = (p ^ q) & ~(p_both | q_both);
        unsigned int two_twos = (p & q) | ((p_both ^ q_both) & ~(p | q));
        // 3 in the nine (the cell and 2 or 3 neighbours) means alive; 4 keeps a live cell alive.
        out[y * words_per_row + x] = (ones & one_two) | (~ones & two_twos & centre);

        up_ones = here_ones, up_twos = here_twos;
        here_ones = down_ones, here_twos = down_twos, centre = down_centre;
    }
}
// ANCHOR_END: kernel
