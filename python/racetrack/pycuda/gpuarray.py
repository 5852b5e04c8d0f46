"""``racetrack.pycuda.gpuarray``: PyCUDA's ``GPUArray`` in the emulator's memory:
``to_gpu``, ``empty``, ``zeros``, ``empty_like``, ``zeros_like``, ``arange``, ``.get()``,
``.gpudata`` (pass it, or the array itself, to a kernel), and the elementwise arithmetic a
tutorial checks results with (done on the host with NumPy; your kernels are what is checked)."""

from __future__ import annotations

import numpy as np

from .._core import device
from .._device_array import DeviceArray
from .driver import DeviceAllocation


class _Borrowed:
    """Memory a ``GPUArray`` views but does not own (``GPUArray(..., gpudata=allocation)``)."""

    def __init__(self, address: int, owner):
        self.address = int(address)
        self._owner = owner

    def relabel(self, label: str) -> None:
        device().relabel(self.address, label)


class GPUArray(DeviceArray):
    """An array in the emulator's memory, as PyCUDA's ``GPUArray`` (C-contiguous)."""

    def __init__(self, shape, dtype, allocator=None, base=None, gpudata=None, strides=None, order: str = "C"):
        if order != "C":
            raise NotImplementedError("racetrack's GPUArray is C-contiguous; order='F' is not supported")
        borrowed = None if gpudata is None else _Borrowed(int(gpudata), gpudata)
        super().__init__(shape, dtype, allocation=borrowed)
        self.base = base

    @property
    def gpudata(self) -> DeviceAllocation:
        """The array's memory, as a kernel argument or for ``memcpy_*``."""
        return DeviceAllocation(self.nbytes, address=self.ptr, owner=self)

    @property
    def mem_size(self) -> int:
        return self.size

    def get(self, ary=None, pagelocked: bool = False, async_: bool = False, stream=None) -> np.ndarray:
        """The contents as a NumPy array; with ``async_=True`` and a stream, copied on it."""
        return super().get(ary, stream=stream if async_ else None)

    def get_async(self, stream=None, ary=None) -> np.ndarray:
        """The contents, copied on ``stream`` (``memcpy_dtoh_async``)."""
        return super().get(ary, stream=stream)

    def set(self, ary, async_: bool = False, stream=None) -> None:
        super().set(ary, stream=stream if async_ else None)

    def set_async(self, ary, stream=None) -> None:
        """Copies ``ary`` in, on ``stream`` (``memcpy_htod_async``)."""
        super().set(ary, stream=stream)

    def __repr__(self) -> str:
        return repr(self.get())

    def __str__(self) -> str:
        return str(self.get())


def to_gpu(ary, allocator=None) -> GPUArray:
    """A ``GPUArray`` holding a copy of the NumPy array ``ary``."""
    host = np.asarray(ary)
    made = GPUArray(host.shape, host.dtype)
    made.set(host)
    return made


def to_gpu_async(ary, allocator=None, stream=None) -> GPUArray:
    """``to_gpu`` with the copy queued on ``stream``."""
    host = np.asarray(ary)
    made = GPUArray(host.shape, host.dtype)
    made.set_async(host, stream=stream)
    return made


def empty(shape, dtype=np.float64, allocator=None, order: str = "C") -> GPUArray:
    """Uninitialized, as ``cudaMalloc`` gives (initcheck reports reads of what nothing wrote)."""
    return GPUArray(shape, dtype, order=order)


def zeros(shape, dtype=np.float64, allocator=None, order: str = "C") -> GPUArray:
    return empty(shape, dtype, order=order).fill(0)


def ones(shape, dtype=np.float64, allocator=None, order: str = "C") -> GPUArray:
    return empty(shape, dtype, order=order).fill(1)


def empty_like(other, dtype=None, order: str = "C") -> GPUArray:
    return empty(other.shape, dtype or other.dtype)


def zeros_like(other, dtype=None, order: str = "C") -> GPUArray:
    return zeros(other.shape, dtype or other.dtype)


def ones_like(other, dtype=None, order: str = "C") -> GPUArray:
    return ones(other.shape, dtype or other.dtype)


def arange(*args, dtype=None) -> GPUArray:
    return to_gpu(np.arange(*args, dtype=dtype))


def sum(a: GPUArray, dtype=None, stream=None) -> GPUArray:  # noqa: A001 (PyCUDA's name)
    return a.sum(dtype)


def dot(a: GPUArray, b: GPUArray, dtype=None, stream=None) -> GPUArray:
    return to_gpu(np.asarray(np.dot(a.get().ravel(), b.get().ravel()), dtype=dtype))


def max(a: GPUArray, stream=None) -> GPUArray:  # noqa: A001 (PyCUDA's name)
    return a.max()


def min(a: GPUArray, stream=None) -> GPUArray:  # noqa: A001 (PyCUDA's name)
    return a.min()
