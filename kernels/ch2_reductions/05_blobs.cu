// FIXED: "blobs": each thread writes one value of a 16×16 shared tile, waits, then reads the mirrored one.
// Thread mapping: one thread per pixel, (x, y) = (blockIdx.x·16 + threadIdx.x, blockIdx.y·16 + threadIdx.y).
// Shared memory: a 16×16 float tile per block (1 KiB).
// Launch: 16×16 blocks, a grid of ceil(width/16) × ceil(height/16); image has width·height floats.

#define TILE 16
#define PERIOD 64.0f

// ANCHOR: amplitude
__device__ float amplitude(unsigned int x, unsigned int y)
{
    const float k = 2.0f * 3.14159265f / PERIOD;
    return (sinf(x * k) + 1.0f) * (sinf(y * k) + 1.0f) * 0.25f;
}
// ANCHOR_END: amplitude

// ANCHOR: kernel
extern "C" __global__ void blobs(float *image, unsigned int width, unsigned int height)
{
    __shared__ float tile[TILE][TILE];
    unsigned int x = blockIdx.x * TILE + threadIdx.x;
    unsigned int y = blockIdx.y * TILE + threadIdx.y;
    // Every thread fills its slot, even off the image's edge: its mirror partner may be inside.
    tile[threadIdx.y][threadIdx.x] = amplitude(x, y);
    __syncthreads();
    if (x < width && y < height) {
        image[y * width + x] = tile[TILE - 1 - threadIdx.y][TILE - 1 - threadIdx.x];
    }
}
// ANCHOR_END: kernel
