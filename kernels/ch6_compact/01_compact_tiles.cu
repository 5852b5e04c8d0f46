// FIXED: stream compaction, keeping the nonzero values in order: count_tiles counts each tile's keepers, the host scans the counts (chapter 6's large-array scan) into tile offsets, and compact_tiles scans its tile's keep flags in shared memory and writes each keeper at its tile's offset plus its rank.
// Thread mapping: one element per thread; tile b holds elements b · blockDim … b · blockDim + blockDim − 1.
// Shared memory: compact_tiles: two buffers of 1024 unsigned ints (8 KiB) for a double-buffered Hillis–Steele scan.
// Launch: both on ⌈n / blockDim⌉ blocks (at least 1) of up to 1024 threads; counts has a slot per tile;
//         tile_offsets is the exclusive scan of counts; out has room for exactly the keepers.

#define MAX_THREADS 1024

// ANCHOR: count
extern "C" __global__ void count_tiles(const unsigned int *in, unsigned int n, unsigned int *counts)
{
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    // A barrier that also counts the threads whose predicate is true.
    int keepers = __syncthreads_count(i < n && in[i] != 0);
    if (threadIdx.x == 0) {
        counts[blockIdx.x] = keepers;
    }
}
// ANCHOR_END: count

// ANCHOR: kernel
extern "C" __global__ void compact_tiles(const unsigned int *in, unsigned int n,
                                        const unsigned int *tile_offsets, unsigned int *out)
{
    __shared__ unsigned int ranks[2][MAX_THREADS];
    unsigned int tid = threadIdx.x;
    unsigned int i = blockIdx.x * blockDim.x + tid;
    unsigned int keep = i < n && in[i] != 0;
    unsigned int from = 0;
    ranks[from][tid] = keep;
    // Inclusive scan of the flags: afterwards ranks[from][tid] counts the keepers up to tid.
    for (unsigned int offset = 1; offset < blockDim.x; offset *= 2) {
        __syncthreads();
        unsigned int sum = ranks[from][tid];
        if (tid >= offset) {
            sum += ranks[from][tid - offset];
        }
        ranks[1 - from][tid] = sum;
        from = 1 - from;
    }
    if (keep) {
        out[tile_offsets[blockIdx.x] + ranks[from][tid] - 1] = in[i];
    }
}
// ANCHOR_END: kernel
