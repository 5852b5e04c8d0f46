// FIXED: one Game of Life step on a torus, reading `in` and writing `out`.
// Thread mapping: one cell per thread, 2D grid.
// Shared memory: none.
// Launch: block (16,16), grid covering width x height.

extern "C" __global__ void life_step(const unsigned char *in, unsigned char *out, int width, int height)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= width || y >= height) {
        return;
    }
    int alive = 0;
    for (int dy = -1; dy <= 1; ++dy) {
        for (int dx = -1; dx <= 1; ++dx) {
            if (dx == 0 && dy == 0) {
                continue;
            }
            int nx = (x + dx + width) % width;
            int ny = (y + dy + height) % height;
            alive += in[ny * width + nx];
        }
    }
    unsigned char self = in[y * width + x];
    out[y * width + x] = (alive == 3 || (self && alive == 2)) ? 1 : 0;
}
