/* reduce_better (tests/corpus/reduce_better.cu) as native C on one core: for each block, each
 * thread's grid-stride partial sum, then the block's halving tree in a 1024-float array; the
 * host adds the partials in double. The baseline `BENCHMARK.md` divides the emulator by.
 *
 *   cc -O2 -o /tmp/reduce_better emu/bench/reduce_better.c && /tmp/reduce_better N GRID
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define THREADS_PER_BLOCK 1024u
#define REPEATS 5

/* The same xorshift inputs as examples/throughput.rs. */
static void input(float *x, size_t n)
{
    uint64_t s = 0x2545F4914F6CDD1Dull;
    for (size_t i = 0; i < n; i++) {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        x[i] = (float)(s >> 40) / (float)(1u << 24);
    }
}

static void reduce_better(const float *x, unsigned n, unsigned grid, float *partial)
{
    static float block_sums[THREADS_PER_BLOCK];
    unsigned stride = THREADS_PER_BLOCK * grid;
    for (unsigned block = 0; block < grid; block++) {
        for (unsigned tid = 0; tid < THREADS_PER_BLOCK; tid++) {
            float mine = 0.0f;
            for (unsigned i = block * THREADS_PER_BLOCK + tid; i < n; i += stride) {
                mine += x[i];
            }
            block_sums[tid] = mine;
        }
        for (unsigned half = THREADS_PER_BLOCK / 2; half > 0; half /= 2) {
            for (unsigned tid = 0; tid < half; tid++) {
                block_sums[tid] += block_sums[tid + half];
            }
        }
        partial[block] = block_sums[0];
    }
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: reduce_better N GRID\n");
        return 2;
    }
    unsigned n = (unsigned)strtoul(argv[1], NULL, 10);
    unsigned grid = (unsigned)strtoul(argv[2], NULL, 10);
    float *x = malloc((size_t)n * sizeof *x);
    float *partial = malloc((size_t)grid * sizeof *partial);
    if (!x || !partial || grid == 0) {
        fprintf(stderr, "bad size\n");
        return 2;
    }
    input(x, n);
    double best = 1e30, got = 0.0, want = 0.0;
    for (int r = 0; r < REPEATS; r++) {
        struct timespec a, b;
        clock_gettime(CLOCK_MONOTONIC, &a);
        reduce_better(x, n, grid, partial);
        clock_gettime(CLOCK_MONOTONIC, &b);
        double secs = (b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) * 1e-9;
        if (secs < best) {
            best = secs;
        }
    }
    for (unsigned g = 0; g < grid; g++) {
        got += partial[g];
    }
    for (unsigned i = 0; i < n; i++) {
        want += x[i];
    }
    printf("| %u | %u | native C -O2 | %.6f | %.3e | sum %.3f (f64 %.3f) |\n", n, grid, best,
           n / best, got, want);
    return 0;
}
