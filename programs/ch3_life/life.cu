// FIXED: Game of Life on a torus, one generation per launch into the other board; a second stream copies every generation out while the next one is computed, and events keep the two apart.
// Build: nvcc -o life programs/ch3_life/life.cu
// Run: ./life 64 48 32
// Thread mapping: thread (x, y) = blockIdx · blockDim + threadIdx owns cell (x, y).
// Shared memory: none.
// Launch: ⌈width / 16⌉ × ⌈height / 16⌉ blocks of 16 × 16 threads, once per generation; arguments: width, height, generations.

#include "../common.h"

#include <cstring>
#include <utility>
#include <vector>

__global__ void life_step(const unsigned char *in, unsigned char *out, unsigned int width, unsigned int height)
{
    unsigned int x = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned int y = blockIdx.y * blockDim.y + threadIdx.y;
    // The grid is rounded up to whole blocks, so the last ones reach past the board.
    if (x >= width || y >= height) {
        return;
    }
    // The board wraps around: column 0's left neighbour is the last column, row 0's upper the last row.
    unsigned int left = (x + width - 1) % width, right = (x + 1) % width;
    const unsigned char *above = in + (y + height - 1) % height * width, *row = in + y * width,
                        *below = in + (y + 1) % height * width;
    unsigned int alive = above[left] + above[x] + above[right] + row[left] + row[right] + below[left]
                       + below[x] + below[right];
    out[y * width + x] = alive == 3 || (alive == 2 && row[x]);
}

// The same rule, one cell at a time, written as the eight offsets rather than named neighbours.
static void life_step_cpu(const unsigned char *in, unsigned char *out, unsigned int width, unsigned int height)
{
    for (unsigned int y = 0; y < height; ++y) {
        for (unsigned int x = 0; x < width; ++x) {
            unsigned int alive = 0;
            for (unsigned int dy = height - 1; dy <= height + 1; ++dy) {
                for (unsigned int dx = width - 1; dx <= width + 1; ++dx) {
                    if (dy != height || dx != width) {
                        alive += in[(y + dy) % height * width + (x + dx) % width];
                    }
                }
            }
            out[y * width + x] = alive == 3 || (alive == 2 && in[y * width + x]);
        }
    }
}

int main(int argc, char **argv)
{
    const unsigned int width = size_arg(argc, argv, 1, 64), height = size_arg(argc, argv, 2, 48);
    const unsigned int generations = size_arg(argc, argv, 3, 32);
    const size_t cells = (size_t)width * height;

    Lcg rng{3};
    std::vector<unsigned char> board(cells);
    for (unsigned char &cell : board) {
        cell = rng.next() % 3 == 0;
    }

    // Pinned, so that cudaMemcpyAsync really runs beside the kernels instead of waiting for them.
    unsigned char *frames, *d_board[2];
    CUDA_CHECK(cudaMallocHost(&frames, (generations + 1) * cells));
    CUDA_CHECK(cudaMalloc(&d_board[0], cells));
    CUDA_CHECK(cudaMalloc(&d_board[1], cells));
    CUDA_CHECK(cudaMemcpy(d_board[0], board.data(), cells, cudaMemcpyHostToDevice));
    std::memcpy(frames, board.data(), cells);

    cudaStream_t compute, copier;
    cudaEvent_t stepped, copied[2];
    CUDA_CHECK(cudaStreamCreate(&compute));
    CUDA_CHECK(cudaStreamCreate(&copier));
    CUDA_CHECK(cudaEventCreateWithFlags(&stepped, cudaEventDisableTiming));
    CUDA_CHECK(cudaEventCreateWithFlags(&copied[0], cudaEventDisableTiming));
    CUDA_CHECK(cudaEventCreateWithFlags(&copied[1], cudaEventDisableTiming));

    const dim3 block(16, 16), grid((width + 15) / 16, (height + 15) / 16);
    for (unsigned int g = 0; g < generations; ++g) {
        const unsigned int from = g % 2, to = 1 - from;
        // Board `to` holds generation g - 1, which the copier may still be reading. (For g < 2
        // nothing has been recorded on copied[to] yet, and a wait on such an event returns at once.)
        CUDA_CHECK(cudaStreamWaitEvent(compute, copied[to], 0));
        life_step<<<grid, block, 0, compute>>>(d_board[from], d_board[to], width, height);
        CUDA_CHECK(cudaGetLastError());
        CUDA_CHECK(cudaEventRecord(stepped, compute));
        CUDA_CHECK(cudaStreamWaitEvent(copier, stepped, 0));
        CUDA_CHECK(cudaMemcpyAsync(frames + (g + 1) * cells, d_board[to], cells, cudaMemcpyDeviceToHost, copier));
        CUDA_CHECK(cudaEventRecord(copied[to], copier));
    }
    CUDA_CHECK(cudaDeviceSynchronize());

    size_t first = 0, last = 0;
    std::vector<unsigned char> next(cells);
    for (unsigned int g = 1; g <= generations; ++g) {
        life_step_cpu(board.data(), next.data(), width, height);
        std::swap(board, next);
        if (std::memcmp(frames + g * cells, board.data(), cells) != 0) {
            std::printf("life on a %u x %u torus: generation %u differs from the CPU's\n", width, height, g);
            return 1;
        }
    }
    for (size_t i = 0; i < cells; ++i) {
        first += frames[i];
        last += board[i];
    }
    std::printf("life on a %u x %u torus, %u generations: %zu cells alive at first, %zu at the end, "
                "every generation matches the CPU\n",
                width, height, generations, first, last);

    CUDA_CHECK(cudaEventDestroy(stepped));
    CUDA_CHECK(cudaEventDestroy(copied[0]));
    CUDA_CHECK(cudaEventDestroy(copied[1]));
    CUDA_CHECK(cudaStreamDestroy(compute));
    CUDA_CHECK(cudaStreamDestroy(copier));
    CUDA_CHECK(cudaFree(d_board[0]));
    CUDA_CHECK(cudaFree(d_board[1]));
    CUDA_CHECK(cudaFreeHost(frames));
    return 0;
}
