"""Chapter 7, matrix multiply: tiles in shared memory, their bounds, and their barriers.

Fixed: naive (one thread per element of C); tiled with bounds checks.
Broken: tiled without the barrier after each tile's products (the next tile overwrites what
slower threads still read: race); tiled without bounds (out of bounds when N % TILE != 0).
"""

import numpy as np
from numba import float32

from racetrack import cuda

TILE = 8


@cuda.jit
def matmul_naive(A, B, C):
    row, col = cuda.grid(2)
    if row < C.shape[0] and col < C.shape[1]:
        acc = float32(0.0)
        for k in range(A.shape[1]):
            acc += A[row, k] * B[k, col]
        C[row, col] = acc


@cuda.jit
def matmul_tiled(A, B, C):
    tile_a = cuda.shared.array((TILE, TILE), float32)
    tile_b = cuda.shared.array((TILE, TILE), float32)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    row = cuda.blockIdx.y * TILE + ty
    col = cuda.blockIdx.x * TILE + tx
    acc = float32(0.0)
    for tile in range((A.shape[1] + TILE - 1) // TILE):
        k = tile * TILE + tx
        tile_a[ty, tx] = A[row, k] if row < A.shape[0] and k < A.shape[1] else 0.0
        k = tile * TILE + ty
        tile_b[ty, tx] = B[k, col] if k < B.shape[0] and col < B.shape[1] else 0.0
        cuda.syncthreads()
        for j in range(TILE):
            acc += tile_a[ty, j] * tile_b[j, tx]
        cuda.syncthreads()
    if row < C.shape[0] and col < C.shape[1]:
        C[row, col] = acc


@cuda.jit
def matmul_tiled_missing_sync(A, B, C):
    tile_a = cuda.shared.array((TILE, TILE), float32)
    tile_b = cuda.shared.array((TILE, TILE), float32)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    row = cuda.blockIdx.y * TILE + ty
    col = cuda.blockIdx.x * TILE + tx
    acc = float32(0.0)
    for tile in range((A.shape[1] + TILE - 1) // TILE):
        k = tile * TILE + tx
        tile_a[ty, tx] = A[row, k] if row < A.shape[0] and k < A.shape[1] else 0.0
        k = tile * TILE + ty
        tile_b[ty, tx] = B[k, col] if k < B.shape[0] and col < B.shape[1] else 0.0
        cuda.syncthreads()
        for j in range(TILE):
            acc += tile_a[ty, j] * tile_b[j, tx]  # BUG: no syncthreads after the products: the next tile's loads overwrite these
    if row < C.shape[0] and col < C.shape[1]:
        C[row, col] = acc


@cuda.jit
def matmul_tiled_no_bounds(A, B, C):
    tile_a = cuda.shared.array((TILE, TILE), float32)
    tile_b = cuda.shared.array((TILE, TILE), float32)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    row = cuda.blockIdx.y * TILE + ty
    col = cuda.blockIdx.x * TILE + tx
    acc = float32(0.0)
    for tile in range((A.shape[1] + TILE - 1) // TILE):
        tile_a[ty, tx] = A[row, tile * TILE + tx]  # BUG: no bounds check: reads past A when N % TILE != 0
        tile_b[ty, tx] = B[tile * TILE + ty, col]
        cuda.syncthreads()
        for j in range(TILE):
            acc += tile_a[ty, j] * tile_b[j, tx]
        cuda.syncthreads()
    if row < C.shape[0] and col < C.shape[1]:
        C[row, col] = acc


def matmul(A, B, kernel=matmul_tiled):
    C = np.zeros((A.shape[0], B.shape[1]), dtype=np.float32)
    blocks = ((C.shape[1] + TILE - 1) // TILE, (C.shape[0] + TILE - 1) // TILE)
    if kernel is matmul_naive:
        blocks = (blocks[1], blocks[0])
    kernel[blocks, (TILE, TILE)](A, B, C)
    return C


def error_bound(A, B):
    """float32 products and sums: each entry is off by at most K * eps * sum_k |a_ik b_kj|."""
    K = A.shape[1]
    return 2 * (K + 1) * np.finfo(np.float32).eps * (np.abs(A.astype(np.float64)) @ np.abs(B.astype(np.float64)))


if __name__ == "__main__":
    import racetrack

    rng = np.random.default_rng(7)
    A = rng.random((20, 13), dtype=np.float32)
    B = rng.random((13, 17), dtype=np.float32)
    exact = A.astype(np.float64) @ B.astype(np.float64)
    for kernel in (matmul_naive, matmul_tiled):
        print(kernel.__name__, bool(np.all(np.abs(matmul(A, B, kernel) - exact) <= error_bound(A, B))))
    for broken in (matmul_tiled_missing_sync, matmul_tiled_no_bounds):
        with racetrack.checking(raise_on_finding=False) as report:
            matmul(A, B, broken)
        print(report, end="\n\n")
