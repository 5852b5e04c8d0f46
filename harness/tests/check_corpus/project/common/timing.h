// A book-style helper header, written on Windows: error-checking macros, a host thread
// type, a host class with a timer, and nothing for the device.
#ifndef TIMING_H
#define TIMING_H
#include <stdio.h>
#include <pthread.h>

static void handle_error(cudaError_t err, const char *file, int line)
{
    if (err != cudaSuccess) {
        printf("%s in %s at line %d\n", cudaGetErrorString(err), file, line);
        exit(EXIT_FAILURE);
    }
}
#define HANDLE_ERROR(err) (handle_error(err, __FILE__, __LINE__))
#define HANDLE_NULL(a) {if ((a) == NULL) { \
                       printf("out of memory at line %d\n", __LINE__); \
                       exit(EXIT_FAILURE);}}

typedef pthread_t worker_thread;

struct HostTimer {
    cudaEvent_t start, stop;
    HostTimer() { cudaEventCreate(&start); cudaEventCreate(&stop); }
    ~HostTimer() { cudaEventDestroy(start); cudaEventDestroy(stop); }
    float elapsed() { float ms = 0; cudaEventElapsedTime(&ms, start, stop); return ms; }
};
#endif
