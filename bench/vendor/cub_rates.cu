// CUB's reduce, scan and histogram rates on this GPU, each as a ratio to a device-to-device
// copy's byte rate measured in the same process: the vendor's line the book's climbs aim at.
//
//   make run            # builds with nvcc for the GPU it finds, then runs
//   ./cub_rates [LOG2_ELEMENTS] [REPETITIONS]     # default 28 (2^28 elements) and 10
//
// A rate counts every byte a kernel must move: the input read once and the output written once
// (a copy of n bytes moves 2n, a reduction of n bytes moves n, a scan of n bytes moves 2n).
// Every result is checked against the CPU before it is timed.

#include <cub/cub.cuh>
#include <cuda_runtime.h>

#include <chrono>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <random>
#include <vector>

#define CHECK(call)                                                                      \
    do {                                                                                 \
        cudaError_t status_ = (call);                                                    \
        if (status_ != cudaSuccess) {                                                    \
            std::fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #call,    \
                         cudaGetErrorString(status_));                                   \
            std::exit(1);                                                                \
        }                                                                                \
    } while (0)

// Mean milliseconds of `work` over `repetitions` calls after one warm-up, with CUDA events.
template <typename Work>
static double time_ms(int repetitions, Work work)
{
    work();
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
    cudaEvent_t start, stop;
    CHECK(cudaEventCreate(&start));
    CHECK(cudaEventCreate(&stop));
    CHECK(cudaEventRecord(start));
    for (int i = 0; i < repetitions; ++i) {
        work();
    }
    CHECK(cudaEventRecord(stop));
    CHECK(cudaEventSynchronize(stop));
    CHECK(cudaGetLastError());
    float total = 0;
    CHECK(cudaEventElapsedTime(&total, start, stop));
    CHECK(cudaEventDestroy(start));
    CHECK(cudaEventDestroy(stop));
    return total / repetitions;
}

struct Row {
    const char *what;
    double ms;
    double input_bytes;
    double bytes_moved;
};

static void fail(const char *what, const char *detail)
{
    std::fprintf(stderr, "%s is wrong: %s\n", what, detail);
    std::exit(1);
}

int main(int argc, char **argv)
{
    const int log2_n = argc > 1 ? std::atoi(argv[1]) : 28;
    const int repetitions = argc > 2 ? std::atoi(argv[2]) : 10;
    if (log2_n < 10 || log2_n > 30 || repetitions < 1) {
        std::fprintf(stderr, "usage: %s [LOG2_ELEMENTS 10..30] [REPETITIONS >= 1]\n", argv[0]);
        return 2;
    }
    const size_t n = size_t(1) << log2_n;

    int device = 0, driver = 0, runtime = 0;
    CHECK(cudaGetDevice(&device));
    cudaDeviceProp props;
    CHECK(cudaGetDeviceProperties(&props, device));
    CHECK(cudaDriverGetVersion(&driver));
    CHECK(cudaRuntimeGetVersion(&runtime));
    char date[32];
    std::time_t now = std::time(nullptr);
    std::strftime(date, sizeof date, "%Y-%m-%d", std::gmtime(&now));
    std::printf("%s (sm_%d%d, %d SMs), CUDA driver %d.%d, runtime %d.%d, CUB %d.%d.%d, %s\n",
                props.name, props.major, props.minor, props.multiProcessorCount, driver / 1000,
                (driver % 1000) / 10, runtime / 1000, (runtime % 1000) / 10, CUB_MAJOR_VERSION,
                CUB_MINOR_VERSION, CUB_SUBMINOR_VERSION, date);
    std::printf("2^%d elements; mean of %d runs after a warm-up, CUDA events\n\n", log2_n,
                repetitions);

    std::mt19937_64 rng(2026);
    std::vector<float> floats(n);
    std::vector<unsigned> uints(n);
    std::vector<unsigned char> bytes(n);
    std::uniform_real_distribution<float> unit(0.0f, 1.0f);
    for (size_t i = 0; i < n; ++i) {
        floats[i] = unit(rng);
        uints[i] = unsigned(rng() % 10);
        bytes[i] = static_cast<unsigned char>(rng());
    }

    float *d_floats, *d_copy, *d_sum;
    unsigned *d_uints, *d_scan;
    unsigned char *d_bytes;
    int *d_histogram;
    CHECK(cudaMalloc(&d_floats, n * sizeof(float)));
    CHECK(cudaMalloc(&d_copy, n * sizeof(float)));
    CHECK(cudaMalloc(&d_sum, sizeof(float)));
    CHECK(cudaMalloc(&d_uints, n * sizeof(unsigned)));
    CHECK(cudaMalloc(&d_scan, n * sizeof(unsigned)));
    CHECK(cudaMalloc(&d_bytes, n));
    CHECK(cudaMalloc(&d_histogram, 256 * sizeof(int)));
    CHECK(cudaMemcpy(d_floats, floats.data(), n * sizeof(float), cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(d_uints, uints.data(), n * sizeof(unsigned), cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(d_bytes, bytes.data(), n, cudaMemcpyHostToDevice));

    // One temporary buffer large enough for every algorithm.
    size_t temp_bytes = 0, need = 0;
    CHECK(cub::DeviceReduce::Sum(nullptr, need, d_floats, d_sum, n));
    temp_bytes = need > temp_bytes ? need : temp_bytes;
    CHECK(cub::DeviceScan::ExclusiveSum(nullptr, need, d_uints, d_scan, n));
    temp_bytes = need > temp_bytes ? need : temp_bytes;
    CHECK(cub::DeviceScan::InclusiveSum(nullptr, need, d_uints, d_scan, n));
    temp_bytes = need > temp_bytes ? need : temp_bytes;
    CHECK(cub::DeviceHistogram::HistogramEven(nullptr, need, d_bytes, d_histogram, 257, 0, 256,
                                              int(n)));
    temp_bytes = need > temp_bytes ? need : temp_bytes;
    void *d_temp;
    CHECK(cudaMalloc(&d_temp, temp_bytes));

    auto reduce = [&] { CHECK(cub::DeviceReduce::Sum(d_temp, temp_bytes, d_floats, d_sum, n)); };
    auto exclusive = [&] {
        CHECK(cub::DeviceScan::ExclusiveSum(d_temp, temp_bytes, d_uints, d_scan, n));
    };
    auto inclusive = [&] {
        CHECK(cub::DeviceScan::InclusiveSum(d_temp, temp_bytes, d_uints, d_scan, n));
    };
    auto histogram = [&] {
        CHECK(cub::DeviceHistogram::HistogramEven(d_temp, temp_bytes, d_bytes, d_histogram, 257,
                                                  0, 256, int(n)));
    };
    auto copy = [&] {
        CHECK(cudaMemcpyAsync(d_copy, d_floats, n * sizeof(float), cudaMemcpyDeviceToDevice));
    };

    // Checks against the CPU, each on the device's result of one call.
    {
        reduce();
        float got = 0;
        CHECK(cudaMemcpy(&got, d_sum, sizeof got, cudaMemcpyDeviceToHost));
        double want = 0, abs_sum = 0;
        for (float v : floats) {
            want += v;
            abs_sum += std::fabs(v);
        }
        // gamma_d * sum|x| with d = log2(n) + 64 levels of additions at most: generous for any
        // order CUB picks, and still 1e-5 of the sum for 2^28 values.
        double depth = log2_n + 64, u = std::ldexp(1.0, -24);
        if (std::fabs(got - want) > depth * u / (1 - depth * u) * abs_sum) {
            char detail[128];
            std::snprintf(detail, sizeof detail, "got %.6g, want %.6g", got, want);
            fail("DeviceReduce::Sum", detail);
        }
    }
    std::vector<unsigned> scanned(n);
    for (int inclusive_scan = 0; inclusive_scan < 2; ++inclusive_scan) {
        inclusive_scan ? inclusive() : exclusive();
        CHECK(cudaMemcpy(scanned.data(), d_scan, n * sizeof(unsigned), cudaMemcpyDeviceToHost));
        unsigned sum = 0;
        for (size_t i = 0; i < n; ++i) {
            unsigned want = inclusive_scan ? sum + uints[i] : sum;
            if (scanned[i] != want) {
                char detail[128];
                std::snprintf(detail, sizeof detail, "element %zu is %u, want %u", i, scanned[i],
                              want);
                fail(inclusive_scan ? "DeviceScan::InclusiveSum" : "DeviceScan::ExclusiveSum",
                     detail);
            }
            sum += uints[i];
        }
    }
    {
        histogram();
        std::vector<int> got(256), want(256, 0);
        CHECK(cudaMemcpy(got.data(), d_histogram, 256 * sizeof(int), cudaMemcpyDeviceToHost));
        for (unsigned char b : bytes) {
            ++want[b];
        }
        for (int bin = 0; bin < 256; ++bin) {
            if (got[bin] != want[bin]) {
                char detail[128];
                std::snprintf(detail, sizeof detail, "bin %d is %d, want %d", bin, got[bin],
                              want[bin]);
                fail("DeviceHistogram::HistogramEven", detail);
            }
        }
    }

    const double word_bytes = double(n) * 4;
    Row rows[] = {
        {"device-to-device copy (cudaMemcpyAsync, 4-byte elements)", time_ms(repetitions, copy),
         word_bytes, 2 * word_bytes},
        {"cub::DeviceReduce::Sum (float)", time_ms(repetitions, reduce), word_bytes, word_bytes},
        {"cub::DeviceScan::ExclusiveSum (unsigned int)", time_ms(repetitions, exclusive),
         word_bytes, 2 * word_bytes},
        {"cub::DeviceScan::InclusiveSum (unsigned int)", time_ms(repetitions, inclusive),
         word_bytes, 2 * word_bytes},
        {"cub::DeviceHistogram::HistogramEven (256 bins, random bytes)",
         time_ms(repetitions, histogram), double(n), double(n)},
    };
    const double copy_rate = rows[0].bytes_moved / rows[0].ms;
    std::printf("| what | ms | input GB/s | bytes moved GB/s | ÷ copy's byte rate |\n");
    std::printf("|---|---|---|---|---|\n");
    for (const Row &row : rows) {
        std::printf("| %s | %.3f | %.1f | %.1f | %.2f |\n", row.what, row.ms,
                    row.input_bytes / row.ms / 1e6, row.bytes_moved / row.ms / 1e6,
                    row.bytes_moved / row.ms / copy_rate);
    }

    CHECK(cudaFree(d_temp));
    CHECK(cudaFree(d_floats));
    CHECK(cudaFree(d_copy));
    CHECK(cudaFree(d_sum));
    CHECK(cudaFree(d_uints));
    CHECK(cudaFree(d_scan));
    CHECK(cudaFree(d_bytes));
    CHECK(cudaFree(d_histogram));
    return 0;
}
