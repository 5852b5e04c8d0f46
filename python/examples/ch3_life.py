"""Chapter 3, Conway's Life: 2D grids, wraparound, double buffering.

Fixed: one generation per launch, reading `board` and writing `out`.
Broken: the generation computed in place (a cell is overwritten while its neighbours still
read it: a race).
"""

import numpy as np

from racetrack import cuda

TILE = 8


@cuda.jit(device=True)
def live_neighbours(board, i, j):
    rows, cols = board.shape
    count = 0
    for di in range(-1, 2):
        for dj in range(-1, 2):
            if di != 0 or dj != 0:
                count += board[(i + di) % rows, (j + dj) % cols]
    return count


@cuda.jit
def life_step(board, out):
    i, j = cuda.grid(2)
    if i < board.shape[0] and j < board.shape[1]:
        n = live_neighbours(board, i, j)
        alive = board[i, j] == 1
        out[i, j] = 1 if (n == 3 or (alive and n == 2)) else 0


@cuda.jit
def life_step_in_place(board):
    i, j = cuda.grid(2)
    if i < board.shape[0] and j < board.shape[1]:
        n = live_neighbours(board, i, j)
        alive = board[i, j] == 1
        board[i, j] = 1 if (n == 3 or (alive and n == 2)) else 0  # BUG: neighbours may still be reading this cell


def grid_for(board):
    return ((board.shape[0] + TILE - 1) // TILE, (board.shape[1] + TILE - 1) // TILE)


def step(board):
    out = np.zeros_like(board)
    life_step[grid_for(board), (TILE, TILE)](board, out)
    return out


def step_in_place(board):
    board = board.copy()
    life_step_in_place[grid_for(board), (TILE, TILE)](board)
    return board


def step_numpy(board):
    n = sum(
        np.roll(np.roll(board, di, 0), dj, 1)
        for di in (-1, 0, 1)
        for dj in (-1, 0, 1)
        if (di, dj) != (0, 0)
    )
    return ((n == 3) | ((board == 1) & (n == 2))).astype(board.dtype)


if __name__ == "__main__":
    import racetrack

    board = (np.random.default_rng(3).random((20, 30)) < 0.3).astype(np.int32)
    print("one step:", np.array_equal(step(board), step_numpy(board)))
    with racetrack.checking(raise_on_finding=False) as report:
        step_in_place(board)
    print(report)
