// FIXED: a whole program whose class mixes host members (a constructor that allocates with
// cudaMalloc, a method that prints with std::cout) with __device__ ones, the way samples write a
// lock or a counter. NVRTC refuses every host function, so check leaves out the host members'
// definitions and keeps the rest: declarations without a body (the detection idiom's probes) and
// constexpr members, which it compiles for the device as nvcc's --expt-relaxed-constexpr does.
// Thread mapping: grid-stride over the text; each byte bumps its bin with an atomic.
// Shared memory: none.
// Launch: any grid; bins has BinCounter::bins_needed() elements.
#include <cstdio>
#include <iostream>
#include <cuda_runtime.h>

struct BinCounter {
    unsigned int *bins = nullptr;

    BinCounter() = default;
    explicit BinCounter(int unused)
    {
        (void)unused;
        cudaMalloc(&bins, bins_needed() * sizeof(unsigned int));
        cudaMemset(bins, 0, bins_needed() * sizeof(unsigned int));
    }
    void release() { cudaFree(bins); }
    void print() const
    {
        unsigned int host[16];
        cudaMemcpy(host, bins, sizeof(host), cudaMemcpyDeviceToHost);
        for (int b = 0; b < bins_needed(); ++b) {
            std::cout << b << ": " << host[b] << "\n";
        }
    }

    static constexpr int bins_needed() { return 16; }
    __device__ void add(unsigned char byte) { atomicAdd(&bins[byte % bins_needed()], 1u); }
};

// Whether T has a member add: sizeof of a call to one of two probes that are never defined.
template <typename T> struct has_add {
    template <typename C> static char probe(decltype(&C::add));
    template <typename C> static long probe(...);
    static constexpr bool value = sizeof(probe<T>(nullptr)) == 1;
};
static_assert(has_add<BinCounter>::value, "BinCounter counts bytes");

__global__ void count_bytes(unsigned int *bins, const unsigned char *text, int n)
{
    BinCounter counter;
    counter.bins = bins;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        counter.add(text[i]);
    }
}

int main()
{
    const int n = 4096;
    unsigned char *text;
    cudaMalloc(&text, n);
    cudaMemset(text, 'a', n);
    BinCounter counter(0);
    count_bytes<<<4, 256>>>(counter.bins, text, n);
    counter.print();
    counter.release();
    cudaFree(text);
    return 0;
}
