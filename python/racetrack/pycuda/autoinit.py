"""``import racetrack.pycuda.autoinit``: the emulated device is ready on import."""

from .._core import device
from . import driver

device = device()  # noqa: F811  (PyCUDA's autoinit exposes `device` and `context`)
context = driver.Context
