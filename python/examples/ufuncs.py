"""Ufuncs on the GPU: `@cuda.vectorize` (one element per thread) and `@cuda.guvectorize` (one
row, or other core shape, per thread). Numba writes the kernel around your function; a bug in
the function is still reported at your line.

Fixed: a scaled add (`vectorize`, with NumPy broadcasting), a level-to-brightness lookup in a
constant table, a dot product of rows and a running sum along rows (`guvectorize`).
Broken: the lookup reads one entry past its table (out of bounds); the running sum runs one
element past its row, so each thread writes the next row's first sum, which that row's own
thread also writes (a race).
"""

import numpy as np

from racetrack import cuda

#: Brightness for each of 16 levels (a gamma curve), read by every thread: constant memory.
LEVELS = 16
BRIGHTNESS = (np.linspace(0.0, 1.0, LEVELS) ** 2.2).astype(np.float32)


@cuda.vectorize(["float32(float32, float32, float32)", "float64(float64, float64, float64)"])
def scaled_add(a, x, y):
    return a * x + y


@cuda.vectorize(["float32(int32)"])
def brightness(level):
    return cuda.const.array_like(BRIGHTNESS)[level]


@cuda.vectorize(["float32(int32)"])
def brightness_of_next_level(level):
    return cuda.const.array_like(BRIGHTNESS)[level + 1]  # BUG: the top level reads past the table


@cuda.guvectorize(["void(float32[:], float32[:], float32[:])", "void(float64[:], float64[:], float64[:])"], "(n),(n)->()")
def row_dot(x, y, result):
    total = x[0] * 0  # of the rows' type, so the sum stays in it
    for i in range(x.shape[0]):
        total += x[i] * y[i]
    result[0] = total


@cuda.guvectorize(["void(int32[:], int32[:])", "void(int64[:], int64[:])"], "(n)->(n)")
def running_sum(x, out):
    total = x[0] * 0
    for i in range(x.shape[0]):
        total += x[i]
        out[i] = total


@cuda.guvectorize(["void(int32[:], int32[:])"], "(n)->(n)")
def running_sum_past_the_row(x, out):
    out[0] = x[0]
    for i in range(1, x.shape[0] + 1):
        out[i] = out[i - 1] + x[i]  # BUG: i reaches n: writes the next row's out[0], which its own thread writes too


def brightness_numpy(levels):
    return BRIGHTNESS[levels]


if __name__ == "__main__":
    import racetrack

    x = np.arange(6, dtype=np.float32)
    print("scaled_add(2, x, 1):", scaled_add(np.float32(2), x, np.float32(1)))
    rows = np.arange(12, dtype=np.float32).reshape(3, 4)
    print("row_dot(rows, rows):", row_dot(rows, rows))
    print("running_sum:", running_sum(np.arange(8, dtype=np.int32).reshape(2, 4)))
    for call in (
        lambda: brightness_of_next_level(np.arange(LEVELS, dtype=np.int32)),
        lambda: running_sum_past_the_row(np.ones((4, 8), np.int32)),
    ):
        with racetrack.checking(raise_on_finding=False) as report:
            call()
        print(report, end="\n\n")
