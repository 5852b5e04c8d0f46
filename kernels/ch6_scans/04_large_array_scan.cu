// FIXED: exclusive scan of any length: scan each tile in a block, scan the tile sums, add each tile's offset.
// Thread mapping: block b owns the tile of 2 · blockDim.x elements from b · 2 · blockDim.x; thread t owns two of them.
// Shared memory: 2 · blockDim.x elements (dynamic); blockDim.x is a power of two.
// Launch: ⌈n / (2 · blockDim)⌉ blocks × blockDim threads per level; the host scans the tile sums with the same kernels.

// ANCHOR: scan_tile
template <typename T>
__device__ void scan_tile(const T *in, T *out, T *tile_sums, unsigned int n)
{
    extern __shared__ __align__(16) unsigned char shared_bytes[];
    T *tile = reinterpret_cast<T *>(shared_bytes);
    unsigned int tid = threadIdx.x;
    unsigned int m = 2 * blockDim.x;
    unsigned int base = blockIdx.x * m;
    for (unsigned int i = tid; i < m; i += blockDim.x) {
        tile[i] = base + i < n ? in[base + i] : T(0);
    }
    unsigned int offset = 1;
    for (unsigned int d = m / 2; d > 0; d /= 2) {
        __syncthreads();
        if (tid < d) {
            tile[offset * (2 * tid + 2) - 1] += tile[offset * (2 * tid + 1) - 1];
        }
        offset *= 2;
    }
    if (tid == 0) {
        tile_sums[blockIdx.x] = tile[m - 1]; // the up-sweep left the tile's total at the root
        tile[m - 1] = T(0);
    }
    for (unsigned int d = 1; d < m; d *= 2) {
        offset /= 2;
        __syncthreads();
        if (tid < d) {
            unsigned int ai = offset * (2 * tid + 1) - 1;
            unsigned int bi = offset * (2 * tid + 2) - 1;
            T t = tile[ai];
            tile[ai] = tile[bi];
            tile[bi] += t;
        }
    }
    __syncthreads();
    for (unsigned int i = tid; i < m; i += blockDim.x) {
        if (base + i < n) {
            out[base + i] = tile[i];
        }
    }
}
// ANCHOR_END: scan_tile

// ANCHOR: add_offsets
template <typename T>
__device__ void add_tile_offsets(T *data, const T *tile_offsets, unsigned int n)
{
    unsigned int m = 2 * blockDim.x;
    unsigned int base = blockIdx.x * m;
    T offset = tile_offsets[blockIdx.x];
    for (unsigned int i = threadIdx.x; i < m; i += blockDim.x) {
        if (base + i < n) {
            data[base + i] += offset;
        }
    }
}
// ANCHOR_END: add_offsets

// ANCHOR: entries
extern "C" __global__ void scan_tiles_u32(const unsigned int *in, unsigned int *out,
                                          unsigned int *tile_sums, unsigned int n)
{
    scan_tile(in, out, tile_sums, n);
}

extern "C" __global__ void add_tile_offsets_u32(unsigned int *data, const unsigned int *tile_offsets,
                                                unsigned int n)
{
    add_tile_offsets(data, tile_offsets, n);
}
// ANCHOR_END: entries

extern "C" __global__ void scan_tiles_f32(const float *in, float *out, float *tile_sums, unsigned int n)
{
    scan_tile(in, out, tile_sums, n);
}

extern "C" __global__ void add_tile_offsets_f32(float *data, const float *tile_offsets, unsigned int n)
{
    add_tile_offsets(data, tile_offsets, n);
}
