/* ch7's tiled matmul (kernels/ch7_matmul/05_tiled.cu) as native C on one core: for each 16 x 16
 * tile of C, the same walk along K in 16-wide steps, each step's A and B tiles staged in a
 * local array and multiplied into the tile's sums in the kernel's order (k from 0 to 15), so
 * each element is summed as one GPU thread sums it. The baseline `BENCHMARK.md` divides the
 * emulator's 1024 x 1024 launch by.
 *
 *   cc -O2 -o /tmp/matmul_tiled emu/bench/matmul_tiled.c && /tmp/matmul_tiled 1024
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define TILE 16u
#define REPEATS 3

static void input(float *x, size_t n, uint64_t s)
{
    for (size_t i = 0; i < n; i++) {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        x[i] = (float)(s >> 40) / (float)(1u << 24);
    }
}

static void matmul_tiled(const float *a, const float *b, float *c, unsigned n)
{
    float as[TILE][TILE], bs[TILE][TILE], sum[TILE][TILE];
    for (unsigned by = 0; by < n; by += TILE) {
        for (unsigned bx = 0; bx < n; bx += TILE) {
            for (unsigned ty = 0; ty < TILE; ty++) {
                for (unsigned tx = 0; tx < TILE; tx++) {
                    sum[ty][tx] = 0.0f;
                }
            }
            for (unsigned t = 0; t < n; t += TILE) {
                for (unsigned ty = 0; ty < TILE; ty++) {
                    for (unsigned tx = 0; tx < TILE; tx++) {
                        as[ty][tx] = a[(by + ty) * n + t + tx];
                        bs[ty][tx] = b[(t + ty) * n + bx + tx];
                    }
                }
                for (unsigned ty = 0; ty < TILE; ty++) {
                    for (unsigned k = 0; k < TILE; k++) {
                        for (unsigned tx = 0; tx < TILE; tx++) {
                            sum[ty][tx] += as[ty][k] * bs[k][tx];
                        }
                    }
                }
            }
            for (unsigned ty = 0; ty < TILE; ty++) {
                for (unsigned tx = 0; tx < TILE; tx++) {
                    c[(by + ty) * n + bx + tx] = sum[ty][tx];
                }
            }
        }
    }
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: matmul_tiled N (a multiple of 16)\n");
        return 2;
    }
    unsigned n = (unsigned)strtoul(argv[1], NULL, 10);
    if (n == 0 || n % TILE != 0) {
        fprintf(stderr, "N must be a positive multiple of %u\n", TILE);
        return 2;
    }
    size_t cells = (size_t)n * n;
    float *a = malloc(cells * sizeof *a), *b = malloc(cells * sizeof *b);
    float *c = malloc(cells * sizeof *c);
    if (!a || !b || !c) {
        fprintf(stderr, "out of memory\n");
        return 2;
    }
    input(a, cells, 0x2545F4914F6CDD1Dull);
    input(b, cells, 0x9E3779B97F4A7C15ull);
    double best = 1e30, checksum = 0.0;
    for (int r = 0; r < REPEATS; r++) {
        struct timespec t0, t1;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        matmul_tiled(a, b, c, n);
        clock_gettime(CLOCK_MONOTONIC, &t1);
        double secs = (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) * 1e-9;
        if (secs < best) {
            best = secs;
        }
    }
    for (size_t i = 0; i < cells; i++) {
        checksum += c[i];
    }
    printf("| %u x %u | native C -O2, one core | %.6f s | %.3e multiply-adds/s | sum %.3f |\n", n,
           n, best, (double)n * n * n / best, checksum);
    return 0;
}
