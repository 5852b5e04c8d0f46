"""The Game of Life updated in place: a cell is rewritten while its neighbours still read it.

Expect: RaceError at the # BUG line.
"""
import numpy as np
from racetrack import cuda


@cuda.jit
def life_step(board):
    x, y = cuda.grid(2)
    rows, cols = board.shape
    if x < rows and y < cols:
        alive = 0
        for dx in (-1, 0, 1):
            for dy in (-1, 0, 1):
                if dx != 0 or dy != 0:
                    alive += board[(x + dx) % rows, (y + dy) % cols]
        if board[x, y] == 1:
            board[x, y] = 1 if alive == 2 or alive == 3 else 0  # BUG: one board, read and written
        else:
            board[x, y] = 1 if alive == 3 else 0


rng = np.random.default_rng(6)
board = (rng.random((32, 32)) < 0.3).astype(np.int32)
life_step[(2, 2), (16, 16)](board)
print("alive:", board.sum())
