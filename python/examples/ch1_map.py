"""Chapter 1, map: one thread per element, blocks of threads, a grid of blocks.

Fixed: scale, element-wise add, grid-stride sigmoid, 2D broadcast add.
Broken: no bounds guard (out of bounds when n is not a multiple of the block); the index
taken from threadIdx alone (every block redoes block 0's elements: wrong result).
"""

import math

import numpy as np

from racetrack import cuda

THREADS = 128


@cuda.jit
def scale(x, a, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = a * x[i]


@cuda.jit
def add(x, y, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = x[i] + y[i]


@cuda.jit
def sigmoid_grid_stride(x, out):
    start = cuda.grid(1)
    stride = cuda.gridsize(1)
    for i in range(start, x.size, stride):
        out[i] = 1.0 / (1.0 + math.exp(-x[i]))


@cuda.jit
def broadcast_add(matrix, row, out):
    i, j = cuda.grid(2)
    if i < matrix.shape[0] and j < matrix.shape[1]:
        out[i, j] = matrix[i, j] + row[j]


@cuda.jit
def scale_no_guard(x, a, out):
    i = cuda.grid(1)
    out[i] = a * x[i]  # BUG: no `if i < x.size`: the last block's extra threads write past the end


@cuda.jit
def scale_thread_index_only(x, a, out):
    i = cuda.threadIdx.x
    if i < x.size:
        out[i] = a * x[i]  # BUG: i lacks blockIdx, so every block writes elements 0..127 (and races)


def blocks_for(n, threads=THREADS):
    return max(1, (n + threads - 1) // threads)


def run_scale(x, a, kernel=scale):
    out = np.zeros_like(x)
    kernel[blocks_for(x.size), THREADS](x, x.dtype.type(a), out)
    return out


def run_add(x, y):
    out = np.zeros_like(x)
    add[blocks_for(x.size), THREADS](x, y, out)
    return out


def run_sigmoid(x, blocks=4):
    out = np.zeros_like(x)
    sigmoid_grid_stride[blocks, THREADS](x, out)
    return out


def run_broadcast_add(matrix, row):
    out = np.zeros_like(matrix)
    threads = (16, 16)
    blocks = (blocks_for(matrix.shape[0], 16), blocks_for(matrix.shape[1], 16))
    broadcast_add[blocks, threads](matrix, row, out)
    return out


if __name__ == "__main__":
    import racetrack

    x = np.arange(1000, dtype=np.float32)
    print("scale:", np.array_equal(run_scale(x, 3), 3 * x))
    for broken in (scale_no_guard, scale_thread_index_only):
        with racetrack.checking(raise_on_finding=False) as report:
            out = run_scale(x, 3, broken)
        print(f"{broken.__name__}: right result: {np.array_equal(out, 3 * x)}")
        print(report, end="\n\n")
