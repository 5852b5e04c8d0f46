// FIXED: up to HALO generations per launch on any grid: each block copies its tile and a halo of HALO cells around it into shared memory and recomputes the halo itself, so no block waits for another.
// Thread mapping: a 32 × 32 block holds a 32 × 32 tile whose inner 24 × 24 cells it owns; thread (tx, ty) holds board cell (blockIdx · 24 + threadIdx − 4), wrapped around the torus.
// Shared memory: two 32 × 32 tiles of unsigned char (2 KiB), static.
// Launch: ⌈width / 24⌉ × ⌈height / 24⌉ blocks of 32 × 32 threads, generations ≤ 4 per launch; the host swaps `in` and `out` between launches.

#define TILE 32
#define HALO 4
#define INNER (TILE - 2 * HALO)

// C's % keeps the sign of i: -1 % 5 is -1, not 4.
__device__ unsigned int wrap(int i, unsigned int n)
{
    int r = i % (int)n;
    return r < 0 ? r + n : r;
}

// ANCHOR: kernel
// 1024 threads a block, so at most 64 registers a thread: the bound makes the compiler keep to it.
extern "C" __global__ void __launch_bounds__(TILE * TILE)
life_iterate_shared(const unsigned char *in, unsigned char *out, unsigned int width,
                    unsigned int height, unsigned int generations)
{
    __shared__ unsigned char tile[2][TILE][TILE];
    unsigned int tx = threadIdx.x, ty = threadIdx.y;
    int x = (int)(blockIdx.x * INNER + tx) - HALO, y = (int)(blockIdx.y * INNER + ty) - HALO;
    // ANCHOR: load
    tile[0][ty][tx] = in[wrap(y, height) * width + wrap(x, width)];
    __syncthreads();
    // ANCHOR_END: load
    // ANCHOR: loop
    int from = 0;
    for (unsigned int generation = 0; generation < generations; ++generation) {
        unsigned char cell = tile[from][ty][tx];
        // The tile's border has no neighbours outside it, so it keeps its old value: after
        // g generations the outer g rings are wrong, and the inner 24 × 24 is right for g ≤ HALO.
        if (tx > 0 && tx < TILE - 1 && ty > 0 && ty < TILE - 1) {
            const unsigned char(*t)[TILE] = tile[from];
            unsigned int alive = t[ty - 1][tx - 1] + t[ty - 1][tx] + t[ty - 1][tx + 1]
                               + t[ty][tx - 1]                     + t[ty][tx + 1]
                               + t[ty + 1][tx - 1] + t[ty + 1][tx] + t[ty + 1][tx + 1];
            cell = alive == 3 || (cell && alive == 2);
        }
        tile[1 - from][ty][tx] = cell;
        __syncthreads();
        from = 1 - from;
    }
    // ANCHOR_END: loop
    bool inner = tx >= HALO && tx < TILE - HALO && ty >= HALO && ty < TILE - HALO;
    if (inner && x < (int)width && y < (int)height) {
        out[y * width + x] = tile[from][ty][tx];
    }
}
// ANCHOR_END: kernel
