"""Tiled matrix multiplication without the second barrier: a fast thread loads the next tile
over values its neighbours are still multiplying.

Expect: RaceError at the # BUG line.
"""
import numpy as np
from numba import float32
from racetrack import cuda

TPB = 16


@cuda.jit
def fast_matmul(A, B, C):
    sA = cuda.shared.array(shape=(TPB, TPB), dtype=float32)
    sB = cuda.shared.array(shape=(TPB, TPB), dtype=float32)

    x, y = cuda.grid(2)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y

    tmp = float32(0.0)
    for i in range(A.shape[1] // TPB):
        sA[tx, ty] = A[x, ty + i * TPB]  # BUG: overwrites a tile others may still read
        sB[tx, ty] = B[tx + i * TPB, y]
        cuda.syncthreads()
        for j in range(TPB):
            tmp += sA[tx, j] * sB[j, ty]
        # (the second cuda.syncthreads() is missing here)
    C[x, y] = tmp


rng = np.random.default_rng(5)
A = rng.random((32, 32)).astype(np.float32)
B = rng.random((32, 32)).astype(np.float32)
C = np.zeros((32, 32), dtype=np.float32)
fast_matmul[(2, 2), (TPB, TPB)](A, B, C)
print(C[0, :4])
