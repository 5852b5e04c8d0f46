// FIXED: reduce, then scan: sum every tile, scan the tile sums, then scan every tile from its offset (three launches).
// Thread mapping: block b owns the tile of blockDim.x · 16 elements from b · blockDim.x · 16; thread t owns 16 consecutive ones, read and written as four 16-byte vectors.
// Shared memory: one unsigned int per warp (32 of them, 128 bytes).
// Launch: ⌈n / (16 · blockDim)⌉ blocks × a block of a multiple of 32 threads up to 512 for reduce_tiles and scan_tiles; one such block for scan_tile_sums; in and out 16-byte aligned.

#define FULL_MASK 0xffffffffu
#define WARP_SIZE 32
#define ITEMS 16
#define MAX_THREADS 512

// ANCHOR: items
// The thread's ITEMS consecutive elements from `first` (0 past n), as four 16-byte loads when
// all of them are in bounds.
__device__ void load_items(const unsigned int *in, unsigned int n, unsigned int first, unsigned int items[ITEMS])
{
    if (first + ITEMS <= n) {
        const uint4 *in4 = reinterpret_cast<const uint4 *>(in + first);
#pragma unroll
        for (int k = 0; k < ITEMS / 4; k++) {
            uint4 v = in4[k];
            items[4 * k] = v.x;
            items[4 * k + 1] = v.y;
            items[4 * k + 2] = v.z;
            items[4 * k + 3] = v.w;
        }
    } else {
#pragma unroll
        for (int i = 0; i < ITEMS; i++) {
            items[i] = first + i < n ? in[first + i] : 0;
        }
    }
}

__device__ void store_items(unsigned int *out, unsigned int n, unsigned int first, const unsigned int items[ITEMS])
{
    if (first + ITEMS <= n) {
        uint4 *out4 = reinterpret_cast<uint4 *>(out + first);
#pragma unroll
        for (int k = 0; k < ITEMS / 4; k++) {
            out4[k] = make_uint4(items[4 * k], items[4 * k + 1], items[4 * k + 2], items[4 * k + 3]);
        }
    } else {
#pragma unroll
        for (int i = 0; i < ITEMS; i++) {
            if (first + i < n) {
                out[first + i] = items[i];
            }
        }
    }
}
// ANCHOR_END: items

// The items replaced by their exclusive scan; returns their total.
__device__ unsigned int thread_exclusive_scan(unsigned int items[ITEMS])
{
    unsigned int sum = 0;
#pragma unroll
    for (int i = 0; i < ITEMS; i++) {
        unsigned int value = items[i];
        items[i] = sum;
        sum += value;
    }
    return sum;
}

// ANCHOR: block_scan
// Lane i gets the sum of lanes 0..=i: at each step a lane adds the value `offset` lanes below it.
__device__ unsigned int warp_inclusive_scan(unsigned int value)
{
    unsigned int lane = threadIdx.x % WARP_SIZE;
    for (unsigned int offset = 1; offset < WARP_SIZE; offset *= 2) {
        unsigned int below = __shfl_up_sync(FULL_MASK, value, offset);
        if (lane >= offset) {
            value += below;
        }
    }
    return value;
}

// Every thread's exclusive prefix of `value` across the block, and the block's total in *total:
// a scan in each warp, a scan of the warps' totals by warp 0, two barriers.
__device__ unsigned int block_exclusive_scan(unsigned int value, unsigned int *total)
{
    __shared__ unsigned int warp_totals[WARP_SIZE];
    unsigned int lane = threadIdx.x % WARP_SIZE;
    unsigned int warp = threadIdx.x / WARP_SIZE;
    unsigned int warps = blockDim.x / WARP_SIZE;
    unsigned int inclusive = warp_inclusive_scan(value);
    if (lane == WARP_SIZE - 1) {
        warp_totals[warp] = inclusive;
    }
    __syncthreads();
    if (warp == 0) {
        unsigned int scanned = warp_inclusive_scan(lane < warps ? warp_totals[lane] : 0);
        if (lane < warps) {
            warp_totals[lane] = scanned;
        }
    }
    __syncthreads();
    *total = warp_totals[warps - 1];
    unsigned int before_warp = warp == 0 ? 0 : warp_totals[warp - 1];
    __syncthreads(); // warp_totals may be written again by the next call
    return before_warp + inclusive - value;
}
// ANCHOR_END: block_scan

__device__ unsigned int block_sum(unsigned int value)
{
    unsigned int total;
    block_exclusive_scan(value, &total);
    return total;
}

// ANCHOR: kernels
// Pass 1: reads the input once, writes one sum per tile.
extern "C" __global__ void __launch_bounds__(MAX_THREADS, 4)
reduce_tiles(const unsigned int *in, unsigned int n, unsigned int *tile_sums)
{
    unsigned int items[ITEMS];
    load_items(in, n, (blockIdx.x * blockDim.x + threadIdx.x) * ITEMS, items);
    unsigned int sum = 0;
#pragma unroll
    for (int i = 0; i < ITEMS; i++) {
        sum += items[i];
    }
    sum = block_sum(sum);
    if (threadIdx.x == 0) {
        tile_sums[blockIdx.x] = sum;
    }
}

// Pass 2: one block scans the tile sums in place, a block's worth at a time with a carry.
extern "C" __global__ void __launch_bounds__(MAX_THREADS, 4)
scan_tile_sums(unsigned int *sums, unsigned int tiles)
{
    unsigned int carry = 0;
    for (unsigned int base = 0; base < tiles; base += blockDim.x * ITEMS) {
        unsigned int items[ITEMS];
        unsigned int first = base + threadIdx.x * ITEMS;
        load_items(sums, tiles, first, items);
        unsigned int total;
        unsigned int before = carry + block_exclusive_scan(thread_exclusive_scan(items), &total);
#pragma unroll
        for (int i = 0; i < ITEMS; i++) {
            items[i] += before;
        }
        store_items(sums, tiles, first, items);
        carry += total;
        __syncthreads(); // every thread has read its part of sums before the next pass
    }
}

// Pass 3: reads the input again, scans each tile and adds the tile's offset.
extern "C" __global__ void __launch_bounds__(MAX_THREADS, 4)
scan_tiles(const unsigned int *in, unsigned int *out, unsigned int n, const unsigned int *tile_offsets)
{
    unsigned int items[ITEMS];
    unsigned int first = (blockIdx.x * blockDim.x + threadIdx.x) * ITEMS;
    load_items(in, n, first, items);
    unsigned int total;
    unsigned int before = tile_offsets[blockIdx.x] + block_exclusive_scan(thread_exclusive_scan(items), &total);
#pragma unroll
    for (int i = 0; i < ITEMS; i++) {
        items[i] += before;
    }
    store_items(out, n, first, items);
}
// ANCHOR_END: kernels
