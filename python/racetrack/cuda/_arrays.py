"""Device arrays in the emulator's memory, as Numba's ``DeviceNDArray`` behaves."""

from __future__ import annotations

import itertools
import weakref
from typing import Optional

import numpy as np

from .._core import device

_names = itertools.count(1)


def _bytes_view(array: np.ndarray) -> np.ndarray:
    """The bytes of a contiguous array, as a 1-D uint8 view (no copy)."""
    return np.ravel(array, order="K").view(np.uint8)


def _free(address: int) -> None:
    try:
        device().free(address)
    except Exception:  # the emulator is busy or gone at exit: the memory goes with it
        pass


class DeviceNDArray:
    """An array in the emulator's global memory: what ``cuda.to_device`` and
    ``cuda.device_array`` return. Contiguous (C or Fortran order) only."""

    __cuda_memory__ = True

    def __init__(self, shape, dtype, order: str = "C", *, uninit: bool = True, label: str = ""):
        if isinstance(shape, (int, np.integer)):
            shape = (int(shape),)
        self.shape = tuple(int(s) for s in shape)
        self.dtype = np.dtype(dtype)
        self.strides = _contiguous_strides(self.shape, self.dtype.itemsize, order)
        self.order = order
        self.size = int(np.prod(self.shape, dtype=np.int64)) if self.shape else 1
        self.nbytes = self.size * self.dtype.itemsize
        self.label = label or f"device_array_{next(_names)}"
        self.device_ctypes_pointer_value = device().alloc(self.nbytes, self.label, uninit=uninit)
        self._finalizer = weakref.finalize(self, _free, self.device_ctypes_pointer_value)

    @property
    def address(self) -> int:
        """The array's device address in the emulator."""
        return self.device_ctypes_pointer_value

    @property
    def ndim(self) -> int:
        return len(self.shape)

    def __len__(self) -> int:
        return self.shape[0]

    def __repr__(self) -> str:
        return f"<racetrack DeviceNDArray shape={self.shape} dtype={self.dtype}>"

    def is_c_contiguous(self) -> bool:
        return self.order == "C" or self.ndim <= 1

    def is_f_contiguous(self) -> bool:
        return self.order == "F" or self.ndim <= 1

    @property
    def __cuda_array_interface__(self):
        return {
            "shape": self.shape,
            "strides": None if self.is_c_contiguous() else self.strides,
            "typestr": self.dtype.str,
            "data": (self.address, False),
            "version": 3,
        }

    def copy_to_device(self, ary, stream=0) -> None:
        """Copies a host array (or another device array) of the same size into this one."""
        if isinstance(ary, DeviceNDArray):
            if ary.nbytes != self.nbytes:
                raise ValueError(f"copy of {ary.nbytes} bytes into a device array of {self.nbytes}")
            device().copy(self.address, ary.address, self.nbytes)
            return
        host = np.asarray(ary, dtype=self.dtype)
        if host.size != self.size:
            raise ValueError(f"copy of {host.size} elements into a device array of {self.size}")
        host = np.reshape(host, self.shape)
        host = np.asfortranarray(host) if self.order == "F" else np.ascontiguousarray(host)
        device().write(self.address, _bytes_view(host))

    def copy_to_host(self, ary: Optional[np.ndarray] = None, stream=0) -> np.ndarray:
        """The array's contents in host memory: into ``ary`` when given, else a new array."""
        if ary is None:
            ary = np.empty(self.shape, dtype=self.dtype, order=self.order)
        if ary.nbytes != self.nbytes:
            raise ValueError(f"copy of {self.nbytes} bytes into a host array of {ary.nbytes}")
        if ary.flags.c_contiguous or ary.flags.f_contiguous:
            device().read_into(self.address, _bytes_view(ary))
        else:
            staging = np.empty(self.shape, dtype=self.dtype, order=self.order)
            device().read_into(self.address, _bytes_view(staging))
            ary[...] = staging
        return ary

    def reshape(self, *newshape, order: str = "C") -> "DeviceNDArray":
        """A view with another shape (same memory)."""
        if len(newshape) == 1 and isinstance(newshape[0], (tuple, list)):
            newshape = tuple(newshape[0])
        # NumPy resolves -1 and checks the size, on a zero-byte stand-in of the same shape.
        resolved = np.broadcast_to(np.empty((), np.uint8), (self.size,)).reshape(newshape).shape
        view = object.__new__(DeviceNDArray)
        view.__dict__.update(self.__dict__)
        view.shape = tuple(resolved)
        view.order = order
        view.strides = _contiguous_strides(view.shape, self.dtype.itemsize, order)
        view._base = self  # keeps the memory alive
        view._finalizer = None
        return view

    def ravel(self, order: str = "C") -> "DeviceNDArray":
        return self.reshape(self.size, order=order)

    def get_numba_type_layout(self) -> str:
        if self.ndim <= 1 or self.order == "C":
            return "C"
        return "F"


def _contiguous_strides(shape, itemsize: int, order: str):
    strides = []
    step = itemsize
    dims = list(range(len(shape)))
    for axis in reversed(dims) if order == "C" else dims:
        strides.append(step)
        step *= max(shape[axis], 1)
    if order == "C":
        strides.reverse()
    return tuple(strides)


def to_device(obj, stream=0, copy: bool = True, to: Optional[DeviceNDArray] = None):
    """``cuda.to_device``: a device array holding a copy of ``obj``."""
    if isinstance(obj, DeviceNDArray):
        return obj
    host = np.asarray(obj)
    order = "F" if host.flags.f_contiguous and not host.flags.c_contiguous else "C"
    if to is None:
        to = DeviceNDArray(host.shape, host.dtype, order, uninit=not copy)
    if copy:
        to.copy_to_device(host)
    return to


def device_array(shape, dtype=np.float64, strides=None, order: str = "C", stream=0):
    """``cuda.device_array``: uninitialized, as on a GPU (initcheck reports reads of what nothing
    wrote)."""
    return DeviceNDArray(shape, dtype, order, uninit=True)


def device_array_like(ary, stream=0):
    if isinstance(ary, DeviceNDArray):
        order = ary.order
    else:
        order = "F" if ary.flags.f_contiguous and not ary.flags.c_contiguous else "C"
    return DeviceNDArray(ary.shape, ary.dtype, order, uninit=True)


def is_cuda_array(obj) -> bool:
    return isinstance(obj, DeviceNDArray)


def as_cuda_array(obj, sync: bool = True) -> DeviceNDArray:
    if isinstance(obj, DeviceNDArray):
        return obj
    raise TypeError(f"{type(obj).__name__} is not an array in the emulator's memory")
