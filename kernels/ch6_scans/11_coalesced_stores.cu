// FIXED: reduce, then scan, with whole-line stores: each warp passes its results through shared memory so every store instruction writes 512 contiguous bytes.
// Thread mapping: as 10_reduce_then_scan.cu; for the stores, lane l of a warp writes 16-byte vectors l, l + 32, l + 64, l + 96 of the warp's 2 KiB.
// Shared memory: one unsigned int per warp (32 of them), and (dynamic) 16 · 33 unsigned ints per warp for the stores.
// Launch: as 10_reduce_then_scan.cu, with blockDim / 32 · 528 · 4 bytes of dynamic shared memory for scan_tiles and scan_tile_sums.

#define FULL_MASK 0xffffffffu
#define WARP_SIZE 32
#define ITEMS 16
#define MAX_THREADS 512
// Each warp's slice of the dynamic shared memory for store_items.
#define WARP_BUFFER (WARP_SIZE * ITEMS + ITEMS)

// ANCHOR: load_items
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

// ANCHOR_END: load_items

// ANCHOR: store_items
// The thread's ITEMS consecutive results, written so that each warp store covers whole 128-byte
// lines: the warp passes them through its own slice of shared memory (WARP_BUFFER words) first.
// One word of padding after every 32 keeps both passes free of bank conflicts.
__device__ void store_items(unsigned int *out, unsigned int n, unsigned int first, const unsigned int items[ITEMS],
                            unsigned int *warp_buffer)
{
    unsigned int lane = threadIdx.x % WARP_SIZE;
    unsigned int warp_first = first - lane * ITEMS;
    if (warp_first + WARP_SIZE * ITEMS <= n) {
#pragma unroll
        for (int i = 0; i < ITEMS; i++) {
            unsigned int k = lane * ITEMS + i;
            warp_buffer[k + k / WARP_SIZE] = items[i];
        }
        __syncwarp();
        uint4 *out4 = reinterpret_cast<uint4 *>(out + warp_first);
#pragma unroll
        for (int j = 0; j < ITEMS / 4; j++) {
            unsigned int k = (j * WARP_SIZE + lane) * 4;
            unsigned int p = k + k / WARP_SIZE;
            out4[j * WARP_SIZE + lane] = make_uint4(warp_buffer[p], warp_buffer[p + 1], warp_buffer[p + 2], warp_buffer[p + 3]);
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
// ANCHOR_END: store_items

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
    extern __shared__ unsigned int warp_buffers[];
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
        store_items(sums, tiles, first, items, warp_buffers + threadIdx.x / WARP_SIZE * WARP_BUFFER);
        carry += total;
        __syncthreads(); // every thread has read its part of sums before the next pass
    }
}

// Pass 3: reads the input again, scans each tile and adds the tile's offset.
extern "C" __global__ void __launch_bounds__(MAX_THREADS, 4)
scan_tiles(const unsigned int *in, unsigned int *out, unsigned int n, const unsigned int *tile_offsets)
{
    extern __shared__ unsigned int warp_buffers[];
    unsigned int items[ITEMS];
    unsigned int first = (blockIdx.x * blockDim.x + threadIdx.x) * ITEMS;
    load_items(in, n, first, items);
    unsigned int total;
    unsigned int before = tile_offsets[blockIdx.x] + block_exclusive_scan(thread_exclusive_scan(items), &total);
#pragma unroll
    for (int i = 0; i < ITEMS; i++) {
        items[i] += before;
    }
    store_items(out, n, first, items, warp_buffers + threadIdx.x / WARP_SIZE * WARP_BUFFER);
}
// ANCHOR_END: kernels
