"""Conway's Game of Life on a torus: one step per launch, reading one board and writing the
other, then swapping them.

Expect: correct
"""
import numpy as np
from racetrack import cuda


@cuda.jit
def life_step(board, new_board):
    x, y = cuda.grid(2)
    rows, cols = board.shape
    if x < rows and y < cols:
        alive = 0
        for dx in (-1, 0, 1):
            for dy in (-1, 0, 1):
                if dx != 0 or dy != 0:
                    alive += board[(x + dx) % rows, (y + dy) % cols]
        if board[x, y] == 1:
            new_board[x, y] = 1 if alive == 2 or alive == 3 else 0
        else:
            new_board[x, y] = 1 if alive == 3 else 0


def life_numpy(board):
    alive = sum(
        np.roll(np.roll(board, dx, 0), dy, 1)
        for dx in (-1, 0, 1)
        for dy in (-1, 0, 1)
        if dx != 0 or dy != 0
    )
    return ((alive == 3) | ((board == 1) & (alive == 2))).astype(board.dtype)


rng = np.random.default_rng(6)
board = (rng.random((32, 32)) < 0.3).astype(np.int32)
d_board = cuda.to_device(board)
d_new = cuda.device_array_like(board)
expected = board
for generation in range(5):
    life_step[(2, 2), (16, 16)](d_board, d_new)
    d_board, d_new = d_new, d_board
    expected = life_numpy(expected)

result = d_board.copy_to_host()
print("alive after 5 generations:", result.sum())
assert np.array_equal(result, expected)
