// What every program here shares: CUDA_CHECK, a fixed-seed generator, and size arguments.
// Each program includes it as "../common.h", so `nvcc -o NAME programs/CHAPTER/FILE.cu` is the whole build.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

// A failed call stops the program with its file, line and error, before a later call fails
// for a reason that no longer points here.
#define CUDA_CHECK(call)                                                                 \
    do {                                                                                 \
        cudaError_t err_ = (call);                                                       \
        if (err_ != cudaSuccess) {                                                       \
            std::fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #call,     \
                         cudaGetErrorString(err_));                                      \
            std::exit(1);                                                                \
        }                                                                                \
    } while (0)

// A 32-bit LCG (Numerical Recipes' constants): the same inputs on every machine and every run,
// so a GPU and the emulator print the same line. Its low bits cycle quickly, hence the shift.
struct Lcg {
    unsigned int state;

    unsigned int next()
    {
        state = state * 1664525u + 1013904223u;
        return state >> 8;
    }
};

// argv[index] as a positive count, or `fallback` when it is absent; anything else ends the program.
inline unsigned int size_arg(int argc, char **argv, int index, unsigned int fallback)
{
    if (index >= argc) {
        return fallback;
    }
    char *end = nullptr;
    unsigned long value = std::strtoul(argv[index], &end, 10);
    if (*argv[index] == '\0' || *end != '\0' || value == 0 || value > 0x7fffffffUL) {
        std::fprintf(stderr, "%s: argument %d must be a positive count, not '%s'\n", argv[0], index,
                     argv[index]);
        std::exit(2);
    }
    return (unsigned int)value;
}
