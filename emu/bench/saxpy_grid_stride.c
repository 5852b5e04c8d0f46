/* saxpy_grid_stride (tests/corpus/saxpy_grid_stride.cu) as native C on one core: y = a·x + y in
 * memory order, as one would write it for a CPU. (Running the grid's threads one after another,
 * each over its grid-stride slice, is 45× slower here: every step jumps 2.5 MiB.)
 *
 *   cc -O2 -o /tmp/saxpy_grid_stride emu/bench/saxpy_grid_stride.c && /tmp/saxpy_grid_stride N GRID
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define REPEATS 5

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: saxpy_grid_stride N GRID\n");
        return 2;
    }
    unsigned n = (unsigned)strtoul(argv[1], NULL, 10);
    unsigned grid = (unsigned)strtoul(argv[2], NULL, 10);
    float *x = malloc((size_t)n * sizeof *x);
    float *y = malloc((size_t)n * sizeof *y);
    if (!x || !y || grid == 0) {
        fprintf(stderr, "bad size\n");
        return 2;
    }
    for (unsigned i = 0; i < n; i++) {
        x[i] = (float)(i % 1000) * 0.001f;
        y[i] = (float)(i % 7);
    }
    const float a = 2.5f;
    double best = 1e30;
    for (int r = 0; r < REPEATS; r++) {
        struct timespec t0, t1;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        for (unsigned i = 0; i < n; i++) {
            y[i] = a * x[i] + y[i];
        }
        clock_gettime(CLOCK_MONOTONIC, &t1);
        double secs = (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) * 1e-9;
        if (secs < best) {
            best = secs;
        }
    }
    double check = 0.0;
    for (unsigned i = 0; i < n; i += 4099) {
        check += y[i];
    }
    printf("| %u | %u | native C -O2 | %.6f | %.3e | check %.3f |\n", n, grid, best, n / best,
           check);
    return 0;
}
