"""reduce_better on Numba's CUDA simulator (NUMBA_ENABLE_CUDASIM=1), for emu/BENCHMARK.md.

The same algorithm as emu/tests/corpus/reduce_better.cu: each thread adds up a grid-stride
slice of x into a float32, stores it in a 1024-float shared array, the block halves that array
with a barrier after every step, and thread 0 writes the block's sum to partial[blockIdx.x];
the host adds the partials in float64 and checks the total against numpy.

Measured with numba 0.68.1 (llvmlite 0.50.0, numpy 2.4.6), CPython 3.11.7:

    python3 -m venv /tmp/numba-venv
    /tmp/numba-venv/bin/pip install numba==0.68.1
    /tmp/numba-venv/bin/python emu/bench/numba_reduce_better.py            # the BENCHMARK.md runs
    /tmp/numba-venv/bin/python emu/bench/numba_reduce_better.py N GRID     # one size; GRID 0 = N/1024

Only the launch is timed (the device arrays are made before it, the partials read after it),
after one untimed warm-up launch. Not part of CI.
"""

import os
import sys
import time

os.environ["NUMBA_ENABLE_CUDASIM"] = "1"

import numba  # noqa: E402
import numpy as np  # noqa: E402
from numba import cuda  # noqa: E402

TPB = 1024  # THREADS_PER_BLOCK in reduce_better.cu


@cuda.jit
def reduce_better(x, n, partial):
    tid = cuda.threadIdx.x
    stride = cuda.blockDim.x * cuda.gridDim.x
    mine = numba.float32(0.0)
    i = cuda.blockIdx.x * cuda.blockDim.x + tid
    while i < n:
        mine += x[i]
        i += stride
    block_sums = cuda.shared.array(TPB, numba.float32)
    block_sums[tid] = mine
    cuda.syncthreads()
    half = TPB // 2
    while half > 0:
        if tid < half:
            block_sums[tid] += block_sums[tid + half]
        cuda.syncthreads()
        half //= 2
    if tid == 0:
        partial[cuda.blockIdx.x] = block_sums[0]


def data(n):
    """Deterministic floats in [0, 1)."""
    return np.random.default_rng(12345).random(n, dtype=np.float32)


def run(n, grid):
    x = data(n)
    d_x = cuda.to_device(x)
    d_p = cuda.device_array(grid, dtype=np.float32)
    t0, c0 = time.perf_counter(), time.process_time()
    reduce_better[grid, TPB](d_x, n, d_p)
    cuda.synchronize()
    secs, cpu = time.perf_counter() - t0, time.process_time() - c0
    got = d_p.copy_to_host().sum(dtype=np.float64)
    want = x.sum(dtype=np.float64)
    if abs(got - want) > 1e-5 * max(abs(want), 1.0):
        raise SystemExit(f"n={n} grid={grid}: sum {got} but numpy says {want}")
    return secs, cpu


def main():
    if not numba.config.ENABLE_CUDASIM:
        raise SystemExit("not running on the CUDA simulator")
    args = sys.argv[1:]
    if len(args) == 2:
        cases = [(int(args[0]), int(args[1]))]
    elif not args:
        cases = [
            # One element per thread: N / 1024 blocks.
            (4096, 0),
            (16384, 0),
            (32768, 0),
            # A fixed grid and a grid-stride loop: many elements per thread.
            (16384, 16),
            (1 << 18, 16),
            (1 << 20, 16),
            (1 << 22, 16),
            (1 << 22, 1),
        ]
    else:
        raise SystemExit("usage: numba_reduce_better.py [N GRID]   (GRID 0: N / 1024 blocks)")
    print(f"numba {numba.__version__}, numpy {np.__version__}, "
          f"python {sys.version.split()[0]}, NUMBA_ENABLE_CUDASIM={os.environ['NUMBA_ENABLE_CUDASIM']}")
    run(TPB, 1)  # warm-up: first-launch costs are start-up, not throughput
    print("wall = elapsed time, cpu = the process's CPU time (all its threads)")
    print("| elements | blocks | wall s | cpu s | elements/s |")
    print("|---:|---:|---:|---:|---:|")
    for n, grid in cases:
        grid = grid or -(-n // TPB)
        secs, cpu = run(n, grid)
        print(f"| {n} | {grid} | {secs:.2f} | {cpu:.2f} | {n / secs:.4g} |", flush=True)


if __name__ == "__main__":
    main()
