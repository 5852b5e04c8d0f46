// FIXED: inclusive scan of any length: each block scans its 256 values with a double-buffered Hillis–Steele, the block totals are scanned the same way, and each block adds the total of all blocks before it.
// Build: nvcc -o scan programs/ch6_scans/scan.cu
// Run: ./scan 5000
// Thread mapping: thread tid of block b owns element b · 256 + tid; add_offsets: block b adds to block b + 1.
// Shared memory: two buffers of 256 unsigned ints (2 KiB).
// Launch: ⌈n / 256⌉ blocks of 256 threads, then the same on the ⌈n / 256⌉ block totals, and so on down to one block.

#include "../common.h"

#include <vector>

#define BLOCK 256

// out may be in: each element is read by its own thread, a barrier before anything is written.
__global__ void scan_blocks(const unsigned int *in, unsigned int *out, unsigned int *totals, unsigned int n)
{
    __shared__ unsigned int buf[2][BLOCK];
    unsigned int tid = threadIdx.x, i = blockIdx.x * BLOCK + tid;
    int from = 0;
    buf[from][tid] = i < n ? in[i] : 0;
    __syncthreads();
    for (unsigned int offset = 1; offset < BLOCK; offset *= 2) {
        unsigned int sum = buf[from][tid];
        if (tid >= offset) {
            sum += buf[from][tid - offset];
        }
        // Into the other buffer: nobody reads it during this step.
        buf[1 - from][tid] = sum;
        from = 1 - from;
        __syncthreads();
    }
    if (i < n) {
        out[i] = buf[from][tid];
    }
    if (tid == BLOCK - 1) {
        totals[blockIdx.x] = buf[from][tid];
    }
}

// Block b of this launch works on block b + 1 of the scan: the first block has nothing before it.
__global__ void add_offsets(unsigned int *out, const unsigned int *scanned_totals, unsigned int n)
{
    unsigned int i = (blockIdx.x + 1) * BLOCK + threadIdx.x;
    if (i < n) {
        out[i] += scanned_totals[blockIdx.x];
    }
}

// Every launch goes to the default stream, so each starts after the one before it has finished.
static void scan(const unsigned int *d_in, unsigned int *d_out, unsigned int n)
{
    const unsigned int blocks = (n + BLOCK - 1) / BLOCK;
    unsigned int *d_totals;
    CUDA_CHECK(cudaMalloc(&d_totals, blocks * sizeof(unsigned int)));
    scan_blocks<<<blocks, BLOCK>>>(d_in, d_out, d_totals, n);
    CUDA_CHECK(cudaGetLastError());
    if (blocks > 1) {
        scan(d_totals, d_totals, blocks);
        add_offsets<<<blocks - 1, BLOCK>>>(d_out, d_totals, n);
        CUDA_CHECK(cudaGetLastError());
    }
    CUDA_CHECK(cudaFree(d_totals));
}

int main(int argc, char **argv)
{
    const unsigned int n = size_arg(argc, argv, 1, 5000);

    Lcg rng{6};
    std::vector<unsigned int> values(n);
    for (unsigned int &v : values) {
        v = rng.next() % 10;
    }

    unsigned int *d_values, *d_scanned;
    CUDA_CHECK(cudaMalloc(&d_values, n * sizeof(unsigned int)));
    CUDA_CHECK(cudaMalloc(&d_scanned, n * sizeof(unsigned int)));
    CUDA_CHECK(cudaMemcpy(d_values, values.data(), n * sizeof(unsigned int), cudaMemcpyHostToDevice));
    scan(d_values, d_scanned, n);
    CUDA_CHECK(cudaDeviceSynchronize());
    std::vector<unsigned int> scanned(n);
    CUDA_CHECK(cudaMemcpy(scanned.data(), d_scanned, n * sizeof(unsigned int), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaFree(d_values));
    CUDA_CHECK(cudaFree(d_scanned));

    unsigned int running = 0;
    for (unsigned int i = 0; i < n; ++i) {
        running += values[i];
        if (scanned[i] != running) {
            std::printf("inclusive scan of %u values: element %u is %u, the CPU says %u\n", n, i, scanned[i], running);
            return 1;
        }
    }
    std::printf("inclusive scan of %u values: last %u, matches the CPU\n", n, running);
    return 0;
}
