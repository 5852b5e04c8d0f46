"""Chapter 1, maps, in PyCUDA form: ``z = a*x + y`` with ``ElementwiseKernel``.

``saxpy_shifted`` reads ``y[i + 1]``: the last element reads one past the end of ``y``.
Racetrack reports the access out of bounds at the ``# BUG`` line, the operation's own line in
this file. ``saxpy`` is the map as it should be.

Run it: ``python pycuda_ch1_saxpy.py``.
"""

import numpy as np

import racetrack
import racetrack.pycuda.autoinit  # noqa: F401
from racetrack.pycuda import gpuarray
from racetrack.pycuda.elementwise import ElementwiseKernel

saxpy = ElementwiseKernel(
    "float a, const float *x, const float *y, float *z",
    "z[i] = a * x[i] + y[i]",
    "saxpy",
)

saxpy_shifted = ElementwiseKernel(
    "float a, const float *x, const float *y, float *z",
    "z[i] = a * x[i] + y[i + 1]",  # BUG: the last i reads y[n], one past the end
    "saxpy_shifted",
)


def run(a: float, x: np.ndarray, y: np.ndarray, kernel=saxpy) -> np.ndarray:
    """``a*x + y`` (float32) by the kernel given."""
    x_gpu = gpuarray.to_gpu(np.ascontiguousarray(x, dtype=np.float32))
    y_gpu = gpuarray.to_gpu(np.ascontiguousarray(y, dtype=np.float32))
    z_gpu = gpuarray.empty_like(x_gpu)
    kernel(a, x_gpu, y_gpu, z_gpu)
    return z_gpu.get()


if __name__ == "__main__":
    x = np.arange(1000, dtype=np.float32)
    y = np.ones(1000, dtype=np.float32)
    print("saxpy:", run(2.0, x, y)[:4])
    try:
        run(2.0, x, y, saxpy_shifted)
    except racetrack.MemoryAccessError as error:
        print(error)
