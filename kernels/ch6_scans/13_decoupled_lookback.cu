// FIXED: a single-pass scan with decoupled look-back: each tile publishes its own sum at once, then adds its predecessors' sums until one has its inclusive prefix.
// Thread mapping: tile t (numbered in start order through tile_counter) holds blockDim.x · 16 elements from t · blockDim.x · 16; thread t owns 16 consecutive ones; thread 0 publishes and looks back.
// Shared memory: one unsigned int per warp (32 of them), the tile number and the tile's prefix; (dynamic) 528 unsigned ints per warp for the stores.
// Launch: ⌈n / (16 · blockDim)⌉ blocks × a block of a multiple of 32 threads up to 512, blockDim / 32 · 528 · 4 bytes of dynamic shared memory; tile_counter and flags zeroed before each launch; in and out 16-byte aligned.

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

#define FLAG_NONE 0
#define FLAG_AGGREGATE 1 // the tile's own sum is published
#define FLAG_PREFIX 2    // the sum of everything up to the tile's end is published

// ANCHOR: publish
__device__ void publish(unsigned int *values, volatile unsigned int *flags, unsigned int tile,
                        unsigned int value, unsigned int flag)
{
    values[tile] = value;
    __threadfence(); // release: the value reaches the whole GPU before the flag that announces it
    flags[tile] = flag;
}
// ANCHOR_END: publish

// ANCHOR: look_back
// The sum of everything before `tile`: walk back over the predecessors, adding each one's
// aggregate, until one of them has published its inclusive prefix.
__device__ unsigned int look_back(volatile unsigned int *flags, const unsigned int *aggregates,
                                  const unsigned int *inclusive_prefixes, unsigned int tile)
{
    unsigned int exclusive = 0;
    for (int p = (int)tile - 1; p >= 0; p--) {
        unsigned int flag;
        do {
            flag = flags[p];
        } while (flag == FLAG_NONE);
        __threadfence(); // acquire: read what the flag announces only after seeing the flag
        exclusive += flag == FLAG_PREFIX ? inclusive_prefixes[p] : aggregates[p];
        if (flag == FLAG_PREFIX) {
            break;
        }
    }
    return exclusive;
}
// ANCHOR_END: look_back

// ANCHOR: kernel
extern "C" __global__ void __launch_bounds__(MAX_THREADS, 4)
decoupled_lookback(const unsigned int *in, unsigned int *out, unsigned int n, unsigned int *tile_counter,
      volatile unsigned int *flags, unsigned int *aggregates, unsigned int *inclusive_prefixes)
{
    extern __shared__ unsigned int warp_buffers[];
    __shared__ unsigned int tile_prefix;
    unsigned int tile = claim_tile(tile_counter);
    unsigned int items[ITEMS];
    unsigned int first = (tile * blockDim.x + threadIdx.x) * ITEMS;
    load_items(in, n, first, items);
    unsigned int total;
    unsigned int before = block_exclusive_scan(thread_exclusive_scan(items), &total);
    // ANCHOR: decoupled
    if (threadIdx.x == 0) {
        unsigned int exclusive = 0;
        if (tile == 0) {
            publish(inclusive_prefixes, flags, tile, total, FLAG_PREFIX);
        } else {
            publish(aggregates, flags, tile, total, FLAG_AGGREGATE);
            exclusive = look_back(flags, aggregates, inclusive_prefixes, tile);
            publish(inclusive_prefixes, flags, tile, exclusive + total, FLAG_PREFIX);
        }
        tile_prefix = exclusive;
    }
    // ANCHOR_END: decoupled
    __syncthreads();
    before += tile_prefix;
#pragma unroll
    for (int i = 0; i < ITEMS; i++) {
        items[i] += before;
    }
    store_items(out, n, first, items, warp_buffers + threadIdx.x / WARP_SIZE * WARP_BUFFER);
}
// ANCHOR_END: kernel
