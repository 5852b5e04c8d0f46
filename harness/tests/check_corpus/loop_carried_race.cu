// BROKEN(race): each round loads a tile, waits, and reads a neighbour's element; nothing waits
// between one round's read and the next round's load, so a fast thread overwrites what a slow
// one has yet to read. The barrier the file has stands between the two lines, but not between
// these two accesses: a report must say where the missing one goes.
// Thread mapping: one thread per element of a 64-float tile, `steps` rounds.
// Shared memory: tile[64].
// Launch: one block of 64 threads; a has steps * 64 elements.

__global__ void tiles(const float *a, float *out, int steps)
{
    __shared__ float tile[64];
    float sum = 0.0f;
    for (int s = 0; s < steps; s++) {
        tile[threadIdx.x] = a[s * 64 + threadIdx.x]; // BUG: the next round's load
        __syncthreads();
        sum += tile[63 - threadIdx.x];
    }
    out[threadIdx.x] = sum;
}
