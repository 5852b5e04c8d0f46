"""The emulator beside Numba's simulator (NUMBA_ENABLE_CUDASIM=1) on one chapter kernel.

    python python/bench/vs_numba_simulator.py --backend racetrack --n 1000000
    NUMBA_ENABLE_CUDASIM=1 python python/bench/vs_numba_simulator.py --backend numba-sim --n 1000000

Prints one line: backend, kernel, elements, the first launch (compile included), the last
(the launch alone, with --launches 2, the default), and elements per second of the last. The kernel is ch2's tree sum
(shared memory, syncthreads, one partial per block); the racetrack run has every checker on.
"""

import argparse
import os
import time

import numpy as np

parser = argparse.ArgumentParser()
parser.add_argument("--backend", choices=["racetrack", "numba-sim"], required=True)
parser.add_argument("--n", type=int, default=1_000_000)
parser.add_argument(
    "--launches", type=int, default=2, help="1 for the simulator at large n: it has no compile to amortize"
)
options = parser.parse_args()

if options.backend == "racetrack":
    from racetrack import cuda
else:
    if os.environ.get("NUMBA_ENABLE_CUDASIM") != "1":
        raise SystemExit("set NUMBA_ENABLE_CUDASIM=1 for --backend numba-sim")
    from numba import cuda
from numba import float32

THREADS = 128


@cuda.jit
def tree_sum(x, partial):
    cache = cuda.shared.array(THREADS, float32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    cache[t] = x[i] if i < x.size else 0.0
    cuda.syncthreads()
    step = THREADS // 2
    while step > 0:
        if t < step:
            cache[t] += cache[t + step]
        cuda.syncthreads()
        step //= 2
    if t == 0:
        partial[cuda.blockIdx.x] = cache[0]


x = np.random.default_rng(0).random(options.n, dtype=np.float32)
blocks = (options.n + THREADS - 1) // THREADS
partial = np.zeros(blocks, np.float32)
times = []
for _ in range(max(1, options.launches)):
    start = time.perf_counter()
    tree_sum[blocks, THREADS](x, partial)
    times.append(time.perf_counter() - start)
exact = float(x.astype(np.float64).sum())
assert abs(float(partial.astype(np.float64).sum()) - exact) <= 7 * np.finfo(np.float32).eps * exact
print(
    f"{options.backend}: tree_sum, {options.n} elements: first launch {times[0]:.3f} s, "
    f"last {times[-1]:.3f} s, {options.n / times[-1]:.3g} elements/s"
)
