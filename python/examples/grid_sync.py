"""Grid-wide synchronization: one kernel whose steps each need every block's result of the
step before, with `cuda.cg.this_grid().sync()` between them (Numba launches such a kernel
cooperatively: every block resident at once).

Fixed: `diffuse` spreads heat along a rod for a number of steps in one launch, each step
reading its neighbours' temperatures of the step before from one buffer and writing the next
into the other, with a grid sync between steps; `diffuse_numpy` is the same in NumPy.
Broken: `blur_after_block_barrier` squares each value, then averages each square with its
neighbours', with only `cuda.syncthreads()` between the two phases. That orders the threads of
one block, not the blocks: a thread at a block's edge reads its neighbour block's square
without any order against the write (a race).
"""

import numpy as np

from racetrack import cuda

THREADS = 64


@cuda.jit
def diffuse(rods, steps, rate):
    """`rods` holds two copies of the rod; step s reads row s % 2 and writes the other. The
    ends keep their temperatures."""
    grid = cuda.cg.this_grid()
    i = cuda.grid(1)
    n = rods.shape[1]
    for step in range(steps):
        now = rods[step % 2]
        after = rods[(step + 1) % 2]
        if 0 < i < n - 1:
            after[i] = now[i] + rate * (now[i - 1] - 2.0 * now[i] + now[i + 1])
        elif i == 0 or i == n - 1:
            after[i] = now[i]
        # Every block's step is written before any block's next step reads it, and read before
        # the step after overwrites it.
        grid.sync()


def diffuse_rod(rod: np.ndarray, steps: int, rate: float = 0.25) -> np.ndarray:
    rods = np.stack([rod, rod]).astype(np.float64)
    blocks = -(-rod.size // THREADS)
    diffuse[blocks, THREADS](rods, steps, rate)
    return rods[steps % 2]


def diffuse_numpy(rod: np.ndarray, steps: int, rate: float = 0.25) -> np.ndarray:
    now = rod.astype(np.float64)
    for _ in range(steps):
        after = now.copy()
        after[1:-1] = now[1:-1] + rate * (now[:-2] - 2.0 * now[1:-1] + now[2:])
        now = after
    return now


@cuda.jit
def blur_after_block_barrier(x, squares, out):
    i = cuda.grid(1)
    n = x.size
    if i < n:
        squares[i] = x[i] * x[i]
    cuda.syncthreads()  # orders this block's threads only
    if 0 < i < n - 1:
        out[i] = (squares[i - 1] + squares[i] + squares[i + 1]) / 3  # BUG: no grid sync before
    elif i < n:
        out[i] = squares[i]


@cuda.jit
def blur_after_grid_sync(x, squares, out):
    grid = cuda.cg.this_grid()
    i = cuda.grid(1)
    n = x.size
    if i < n:
        squares[i] = x[i] * x[i]
    grid.sync()  # every block's squares are written before any is read
    if 0 < i < n - 1:
        out[i] = (squares[i - 1] + squares[i] + squares[i + 1]) / 3
    elif i < n:
        out[i] = squares[i]


def blur_squares(x: np.ndarray, kernel=blur_after_grid_sync) -> np.ndarray:
    squares = np.zeros_like(x)
    out = np.zeros_like(x)
    kernel[-(-x.size // THREADS), THREADS](x, squares, out)
    return out


def blur_squares_numpy(x: np.ndarray) -> np.ndarray:
    squares = x * x
    out = squares.copy()
    out[1:-1] = (squares[:-2] + squares[1:-1] + squares[2:]) / 3
    return out
