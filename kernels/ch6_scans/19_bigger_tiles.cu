// FIXED: 14_warp_lookback.cu with tiles 1.5 times as large: 24 elements per thread, so a third fewer tiles claim a number, publish and look back for the same bytes.
// Thread mapping: as 14_warp_lookback.cu, with 24 consecutive elements per thread (six 16-byte loads and stores) and tiles of 24 · blockDim elements.
// Shared memory: one unsigned int per warp (room for 32) and the tile number; (dynamic) 792 unsigned ints per warp for the stores.
// Launch: ⌈n / (24 · blockDim)⌉ blocks × a block of a multiple of 32 threads up to 256, blockDim / 32 · 792 · 4 bytes of dynamic shared memory; tile_counter and status zeroed before each launch; in and out 16-byte aligned.

#define FULL_MASK 0xffffffffu
#define WARP_SIZE 32
// ANCHOR: tile_size
// 24 items need more than 32 registers per thread: __launch_bounds__(MAX_THREADS, 6) gives the
// compiler 40 and keeps 6 blocks of 256 threads (48 of the 64 warp slots) on each
// multiprocessor. 32 items took 64 registers, half the warp slots, and ran slower than 16.
#define ITEMS 24
#define MAX_THREADS 256
// ANCHOR_END: tile_size
// Each warp's slice of the dynamic shared memory for store_items.
#define WARP_BUFFER (WARP_SIZE * ITEMS + ITEMS)

// ANCHOR: load_items
// The thread's ITEMS consecutive elements from `first` (0 past n), as ITEMS / 4 16-byte loads
// when all of them are in bounds.
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
// One word of padding after every 32 keeps the vector pass free of bank conflicts; with 24 items
// the first pass has 2-way conflicts (16 and 32 items would have none).
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

// ANCHOR_END: block_scan

// ANCHOR: claim
// Tiles are numbered in the order blocks start, not by blockIdx.x: a tile waits only for tiles
// numbered before it, whose blocks are already running, so it never waits for a block that the
// GPU has not started yet.
__device__ unsigned int claim_tile(unsigned int *tile_counter)
{
    __shared__ unsigned int tile;
    if (threadIdx.x == 0) {
        tile = atomicAdd(tile_counter, 1);
    }
    __syncthreads();
    return tile;
}
// ANCHOR_END: claim

#define STATE_NONE 0
#define STATE_AGGREGATE 1
#define STATE_PREFIX 2

// ANCHOR: status
// A tile's status: its state in the high 32 bits, its value in the low 32. One 64-bit store
// publishes both, so no reader can see a state without its value, and no fence is needed: the
// loads and stores are relaxed (never torn, never served stale from L1) at GPU scope, all that
// blocks of one launch need.
__device__ void publish(unsigned long long *status, unsigned int tile, unsigned int state, unsigned int value)
{
    unsigned long long word = (unsigned long long)state << 32 | value;
    asm volatile("st.relaxed.gpu.global.u64 [%0], %1;" ::"l"(status + tile), "l"(word) : "memory");
}

__device__ unsigned long long read_status(const unsigned long long *status, int tile)
{
    unsigned long long word;
    asm volatile("ld.relaxed.gpu.global.u64 %0, [%1];" : "=l"(word) : "l"(status + tile) : "memory");
    return word;
}
// ANCHOR_END: status

__device__ unsigned int warp_sum(unsigned int value)
{
    for (unsigned int offset = WARP_SIZE / 2; offset > 0; offset /= 2) {
        value += __shfl_xor_sync(FULL_MASK, value, offset);
    }
    return value;
}

// ANCHOR: warp_look_back
// Warp 0's look-back: lane i reads the status of the tile i places before the window's first,
// waits until all 32 have published something, and adds the values up to the nearest inclusive
// prefix; without one, the window moves 32 tiles back.
__device__ unsigned int warp_look_back(const unsigned long long *status, unsigned int tile)
{
    unsigned int lane = threadIdx.x % WARP_SIZE;
    unsigned int exclusive = 0;
    for (int window = (int)tile - 1;; window -= WARP_SIZE) {
        int p = window - (int)lane;
        unsigned long long word;
        do {
            // before tile 0 lies an inclusive prefix of 0
            word = p >= 0 ? read_status(status, p) : (unsigned long long)STATE_PREFIX << 32;
        } while (__any_sync(FULL_MASK, (unsigned int)(word >> 32) == STATE_NONE));
        unsigned int prefixes = __ballot_sync(FULL_MASK, (unsigned int)(word >> 32) == STATE_PREFIX);
        bool counts = (prefixes & ((1u << lane) - 1)) == 0; // no prefix nearer than this lane's
        exclusive += warp_sum(counts ? (unsigned int)word : 0);
        if (prefixes != 0) {
            return exclusive;
        }
    }
}
// ANCHOR_END: warp_look_back

// ANCHOR: tile_scan
// Every thread's exclusive prefix of `value` across everything before it in the whole input:
// each warp scans its values; warp 0 scans the warps' totals, publishes the tile's aggregate,
// looks back for the tile's prefix and folds it in. Two barriers, and the look-back starts as
// soon as the tile's total is known.
__device__ unsigned int tile_exclusive_scan(unsigned int value, unsigned int tile, unsigned long long *status)
{
    __shared__ unsigned int warp_prefixes[WARP_SIZE];
    unsigned int lane = threadIdx.x % WARP_SIZE;
    unsigned int warp = threadIdx.x / WARP_SIZE;
    unsigned int warps = blockDim.x / WARP_SIZE;
    unsigned int inclusive = warp_inclusive_scan(value);
    if (lane == WARP_SIZE - 1) {
        warp_prefixes[warp] = inclusive;
    }
    __syncthreads();
    if (warp == 0) {
        unsigned int warp_total = lane < warps ? warp_prefixes[lane] : 0;
        unsigned int scanned = warp_inclusive_scan(warp_total);
        unsigned int total = __shfl_sync(FULL_MASK, scanned, warps - 1);
        unsigned int prefix = 0;
        if (tile == 0) {
            if (lane == 0) {
                publish(status, tile, STATE_PREFIX, total);
            }
        } else {
            if (lane == 0) {
                publish(status, tile, STATE_AGGREGATE, total);
            }
            prefix = warp_look_back(status, tile);
            if (lane == 0) {
                publish(status, tile, STATE_PREFIX, prefix + total);
            }
        }
        if (lane < warps) {
            warp_prefixes[lane] = prefix + scanned - warp_total;
        }
    }
    __syncthreads();
    return warp_prefixes[warp] + inclusive - value;
}
// ANCHOR_END: tile_scan

// ANCHOR: kernel
extern "C" __global__ void __launch_bounds__(MAX_THREADS, 6)
bigger_tiles(const unsigned int *in, unsigned int *out, unsigned int n, unsigned int *tile_counter,
              unsigned long long *status)
{
    extern __shared__ unsigned int warp_buffers[];
    unsigned int tile = claim_tile(tile_counter);
    unsigned int items[ITEMS];
    unsigned int first = (tile * blockDim.x + threadIdx.x) * ITEMS;
    load_items(in, n, first, items);
    unsigned int before = tile_exclusive_scan(thread_exclusive_scan(items), tile, status);
#pragma unroll
    for (int i = 0; i < ITEMS; i++) {
        items[i] += before;
    }
    store_items(out, n, first, items, warp_buffers + threadIdx.x / WARP_SIZE * WARP_BUFFER);
}
// ANCHOR_END: kernel
