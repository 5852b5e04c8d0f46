"""Matrix multiplication with shared-memory tiles: a block loads a tile of A and a tile of B,
waits, multiplies them, waits again before loading the next pair.

Expect: correct
Float32 sums: at most 24 terms (the inner dimension).
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
    for i in range((A.shape[1] + TPB - 1) // TPB):
        sA[tx, ty] = 0
        sB[tx, ty] = 0
        if x < A.shape[0] and (ty + i * TPB) < A.shape[1]:
            sA[tx, ty] = A[x, ty + i * TPB]
        if y < B.shape[1] and (tx + i * TPB) < B.shape[0]:
            sB[tx, ty] = B[tx + i * TPB, y]
        cuda.syncthreads()
        for j in range(TPB):
            tmp += sA[tx, j] * sB[j, ty]
        cuda.syncthreads()
    if x < C.shape[0] and y < C.shape[1]:
        C[x, y] = tmp


rng = np.random.default_rng(5)
A = rng.random((40, 24)).astype(np.float32)
B = rng.random((24, 36)).astype(np.float32)
C = np.zeros((40, 36), dtype=np.float32)
blocks = ((C.shape[0] + TPB - 1) // TPB, (C.shape[1] + TPB - 1) // TPB)
fast_matmul[blocks, (TPB, TPB)](A, B, C)
print(C[0, :4])
assert np.allclose(C, A @ B, rtol=1e-5, atol=1e-5)
