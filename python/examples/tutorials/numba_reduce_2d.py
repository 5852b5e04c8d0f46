"""A 2D reduction: 16x16 blocks over a matrix, each block sums its tile in shared memory
(rows first, then the first column) and adds it to the total.

Expect: correct
Float32 sums: at most 2000 terms (the 40x50 matrix).
"""
import numpy as np
from numba import float32
from racetrack import cuda

TILE = 16


@cuda.jit
def sum_2d(m, total):
    tile = cuda.shared.array((TILE, TILE), float32)
    x, y = cuda.grid(2)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    if x < m.shape[0] and y < m.shape[1]:
        tile[tx, ty] = m[x, y]
    else:
        tile[tx, ty] = 0
    cuda.syncthreads()

    stride = TILE // 2
    while stride > 0:
        if ty < stride:
            tile[tx, ty] += tile[tx, ty + stride]
        cuda.syncthreads()
        stride //= 2
    stride = TILE // 2
    while stride > 0:
        if ty == 0 and tx < stride:
            tile[tx, 0] += tile[tx + stride, 0]
        cuda.syncthreads()
        stride //= 2

    if tx == 0 and ty == 0:
        cuda.atomic.add(total, 0, tile[0, 0])


m = np.random.default_rng(4).random((40, 50)).astype(np.float32)
total = np.zeros(1, dtype=np.float32)
blocks = ((m.shape[0] + TILE - 1) // TILE, (m.shape[1] + TILE - 1) // TILE)
sum_2d[blocks, (TILE, TILE)](m, total)
print(total[0], m.sum())
assert abs(total[0] - m.astype(np.float64).sum()) <= 1e-2
