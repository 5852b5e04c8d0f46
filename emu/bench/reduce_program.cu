// reduce_better (tests/corpus/reduce_better.cu) as a whole program: the host makes the same
// xorshift inputs as reduce_better.c, copies them to the device, launches the kernel once,
// copies the partial sums back and adds them in double. `BENCHMARK.md`'s whole-program row runs
// it on a GPU and under `racetrack run`, where the sums must agree to the bit (each partial is
// one thread's grid-stride sum and one block's tree, in the same order everywhere).
//
//   nvcc -O2 -o /tmp/reduce_program emu/bench/reduce_program.cu && /tmp/reduce_program N GRID
//   racetrack run --timings -- /tmp/reduce_program N GRID

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "../tests/corpus/reduce_better.cu"

#define CHECK(call)                                                                          \
    do {                                                                                     \
        cudaError_t err = (call);                                                            \
        if (err != cudaSuccess) {                                                            \
            fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(err));     \
            return 1;                                                                        \
        }                                                                                    \
    } while (0)

int main(int argc, char **argv)
{
    unsigned n = argc > 1 ? (unsigned)strtoul(argv[1], nullptr, 10) : 1u << 22;
    unsigned grid = argc > 2 ? (unsigned)strtoul(argv[2], nullptr, 10) : 2560u;
    if (n == 0 || grid == 0) {
        fprintf(stderr, "usage: reduce_program [N [GRID]] (both positive)\n");
        return 2;
    }
    std::vector<float> x(n);
    uint64_t s = 0x2545F4914F6CDD1Dull;
    for (unsigned i = 0; i < n; i++) {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        x[i] = (float)(s >> 40) / (float)(1u << 24);
    }
    float *dx = nullptr, *dpartial = nullptr;
    CHECK(cudaMalloc(&dx, (size_t)n * sizeof(float)));
    CHECK(cudaMalloc(&dpartial, (size_t)grid * sizeof(float)));
    CHECK(cudaMemcpy(dx, x.data(), (size_t)n * sizeof(float), cudaMemcpyHostToDevice));
    reduce_better<<<grid, THREADS_PER_BLOCK>>>(dx, n, dpartial);
    CHECK(cudaGetLastError());
    std::vector<float> partial(grid);
    CHECK(cudaMemcpy(partial.data(), dpartial, (size_t)grid * sizeof(float),
                     cudaMemcpyDeviceToHost));
    double got = 0.0, want = 0.0;
    for (unsigned g = 0; g < grid; g++) {
        got += partial[g];
    }
    for (unsigned i = 0; i < n; i++) {
        want += x[i];
    }
    printf("reduce_better: %u floats, %u blocks: sum %.6f (f64 of the inputs %.6f)\n", n, grid,
           got, want);
    CHECK(cudaFree(dx));
    CHECK(cudaFree(dpartial));
    return 0;
}
