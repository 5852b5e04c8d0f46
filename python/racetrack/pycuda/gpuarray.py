"""``racetrack.pycuda.gpuarray``: ``to_gpu``, ``empty``, ``zeros``, ``empty_like``,
``zeros_like`` and ``GPUArray.get()``; arrays live in the emulator's memory."""

from __future__ import annotations

import numpy as np

from ..cuda._arrays import DeviceNDArray


class GPUArray(DeviceNDArray):
    """An array in the emulator's memory; a kernel argument passes its address."""

    @property
    def gpudata(self) -> int:
        return self.address

    @property
    def ptr(self) -> int:
        return self.address

    def get(self, ary=None, pagelocked: bool = False, stream=None) -> np.ndarray:
        return self.copy_to_host(ary)

    def set(self, ary, stream=None) -> None:
        self.copy_to_device(ary)

    def fill(self, value, stream=None) -> "GPUArray":
        self.copy_to_device(np.full(self.shape, value, self.dtype))
        return self

    def __repr__(self) -> str:
        return repr(self.get())


def _new(shape, dtype, uninit: bool) -> GPUArray:
    array = object.__new__(GPUArray)
    DeviceNDArray.__init__(array, shape, dtype, "C", uninit=uninit)
    return array


def to_gpu(ary, allocator=None) -> GPUArray:
    host = np.ascontiguousarray(ary)
    array = _new(host.shape, host.dtype, uninit=False)
    array.copy_to_device(host)
    return array


def empty(shape, dtype=np.float64, allocator=None, order="C") -> GPUArray:
    """Uninitialized, as on a GPU: initcheck reports a kernel reading what nothing wrote."""
    return _new(shape, dtype, uninit=True)


def zeros(shape, dtype=np.float64, allocator=None, order="C") -> GPUArray:
    return _new(shape, dtype, uninit=False)


def empty_like(other, dtype=None) -> GPUArray:
    return empty(other.shape, dtype or other.dtype)


def zeros_like(other, dtype=None) -> GPUArray:
    return zeros(other.shape, dtype or other.dtype)


def arange(*args, dtype=None) -> GPUArray:
    return to_gpu(np.arange(*args, dtype=dtype))
