"""The chapters' Numba kernels (python/examples/) on Racetrack's emulator, every checker on,
beside Numba's own simulator (``NUMBA_ENABLE_CUDASIM=1``), which runs the same source.

    python python/bench/chapters.py                      # both, and the table
    python python/bench/chapters.py --backend racetrack  # one backend's lines

Each kernel is launched once to compile it, then timed on the same inputs: the best of three
launches on racetrack (on a shared machine the best is the least disturbed), one launch on the
simulator; the table shows that launch, copies of the arrays in and out included as a script
sees them, and elements per second. Numba's simulator runs each GPU thread as a Python thread:
at 1 M elements one launch takes from a minute to half an hour, so it runs ``--sim-n``
elements, and its elements per second is that size's (both grids grow with the input, so the
rate holds at 1 M; the table says which size each side ran).

The examples import ``from racetrack import cuda``; for the simulator this script puts
``numba.cuda`` (in simulator mode) in that name's place, so both sides run the very same
kernel source.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
import types

import numpy as np

EXAMPLES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples")


def load_examples(backend: str):
    if backend == "numba-sim":
        if os.environ.get("NUMBA_ENABLE_CUDASIM") != "1":
            raise SystemExit("the numba-sim backend runs under NUMBA_ENABLE_CUDASIM=1")
        from numba import cuda as simulator

        stand_in = types.ModuleType("racetrack")
        stand_in.cuda = simulator
        sys.modules["racetrack"] = stand_in
    sys.path.insert(0, os.path.abspath(EXAMPLES))
    import ch1_map
    import ch2_reductions
    import ch4_atomics

    return ch1_map, ch2_reductions, ch4_atomics


def cases(ch1_map, ch2_reductions, ch4_atomics):
    """``(name, inputs(n), run(inputs), check(inputs, result))`` for each kernel."""
    rng = np.random.default_rng(0)

    def floats(n):
        return (rng.random(n, dtype=np.float32),)

    def bytes_(n):
        return (rng.integers(0, 1000, n).astype(np.int32),)

    def check_sum(inputs, partial):
        (x,) = inputs
        exact = float(x.astype(np.float64).sum())
        # Each block's tree adds 128 terms (7 levels), the host adds the partials in float64.
        assert abs(float(partial.astype(np.float64).sum()) - exact) <= 8 * np.finfo(np.float32).eps * exact

    return [
        (
            "ch1 scale (map)",
            floats,
            lambda inputs: ch1_map.run_scale(inputs[0], 2.0),
            lambda inputs, out: np.testing.assert_array_equal(out, inputs[0] * np.float32(2.0)),
        ),
        (
            "ch2 tree_sum (shared memory, syncthreads)",
            floats,
            lambda inputs: ch2_reductions.block_sums(inputs[0]),
            check_sum,
        ),
        (
            "ch4 histogram_global (global atomics)",
            bytes_,
            lambda inputs: ch4_atomics.histogram(inputs[0], ch4_atomics.histogram_global),
            lambda inputs, out: np.testing.assert_array_equal(out, ch4_atomics.histogram_numpy(inputs[0])),
        ),
        (
            "ch4 histogram_shared (shared atomics, 16 elements a thread)",
            bytes_,
            lambda inputs: ch4_atomics.histogram(
                inputs[0], ch4_atomics.histogram_shared, max(1, inputs[0].size // (16 * ch4_atomics.THREADS))
            ),
            lambda inputs, out: np.testing.assert_array_equal(out, ch4_atomics.histogram_numpy(inputs[0])),
        ),
    ]


def measure(backend: str, n: int) -> list:
    rows = []
    repeats = 3 if backend == "racetrack" else 1
    for name, make, run, check in cases(*load_examples(backend)):
        inputs = make(n)
        start = time.perf_counter()
        run(inputs)
        first = time.perf_counter() - start
        second = float("inf")
        for _ in range(repeats):
            start = time.perf_counter()
            result = run(inputs)
            second = min(second, time.perf_counter() - start)
            check(inputs, result)
        rows.append({"kernel": name, "n": n, "first_s": first, "launch_s": second, "per_s": n / second})
        print(
            f"{backend}: {name}, {n} elements: first {first:.3f} s, launch {second:.3f} s, {n / second:.3g} elements/s",
            file=sys.stderr,
        )
    return rows


def run_backend(backend: str, n: int) -> list:
    env = dict(os.environ)
    if backend == "numba-sim":
        env["NUMBA_ENABLE_CUDASIM"] = "1"
    else:
        env.pop("NUMBA_ENABLE_CUDASIM", None)
    out = subprocess.run(
        [sys.executable, os.path.abspath(__file__), "--backend", backend, "--n", str(n), "--json"],
        env=env,
        check=True,
        stdout=subprocess.PIPE,
        text=True,
    ).stdout
    return json.loads(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--backend", choices=["racetrack", "numba-sim"])
    parser.add_argument("--n", type=int, default=1_000_000, help="elements for racetrack (default 1 M)")
    parser.add_argument(
        "--sim-n", type=int, default=16_384, help="elements for Numba's simulator (default 16 Ki)"
    )
    parser.add_argument("--json", action="store_true", help="print one backend's rows as JSON")
    options = parser.parse_args()
    if options.backend:
        rows = measure(options.backend, options.n)
        if options.json:
            print(json.dumps(rows))
        return
    ours = run_backend("racetrack", options.n)
    theirs = run_backend("numba-sim", options.sim_n)
    print(
        f"Machine: {platform.machine()}, {os.cpu_count()} cores, {platform.processor() or platform.platform()}"
    )
    print(f"racetrack: {options.n} elements, every checker on; Numba's simulator: {options.sim_n} elements")
    print()
    print(
        "| kernel | racetrack launch (s) | racetrack elements/s "
        "| simulator launch (s) | simulator elements/s | speed-up |"
    )
    print("|---|---:|---:|---:|---:|---:|")
    for mine, sim in zip(ours, theirs):
        print(
            f"| {mine['kernel']} | {mine['launch_s']:.3f} | {mine['per_s']:.3g} | "
            f"{sim['launch_s']:.3f} | {sim['per_s']:.3g} | {mine['per_s'] / sim['per_s']:.0f}x |"
        )


if __name__ == "__main__":
    main()
