"""``racetrack.pycuda.curandom.rand``: uniform random numbers in [0, 1) in a ``GPUArray``, as
tutorials fill their inputs (made by NumPy on the host: the kernels that use them are what the
checkers look at)."""

from __future__ import annotations

import numpy as np

from .gpuarray import GPUArray, to_gpu

_generator = np.random.default_rng()


def seed(value: int) -> None:
    """Makes later ``rand`` calls repeatable."""
    global _generator
    _generator = np.random.default_rng(value)


def rand(shape, dtype=np.float32, stream=None) -> GPUArray:
    dtype = np.dtype(dtype)
    if dtype.kind != "f":
        raise TypeError(f"rand makes floating-point numbers, not {dtype}")
    return to_gpu(_generator.random(shape).astype(dtype))
