"""What PyCUDA's ``GPUArray`` and CuPy's ``ndarray`` share: a C-contiguous array in the
emulator's global memory, copied to and from NumPy, with the host-side arithmetic a tutorial
uses between kernels (``a + b``, ``2 * a``, ``a.sum()``), done with NumPy: the kernels a
learner writes are what the checkers are for, not these."""

from __future__ import annotations

import itertools
import operator
import weakref
from typing import Optional

import numpy as np

from . import _streams
from ._core import device
from ._cuda_c import where

_names = itertools.count(1)


def bytes_view(array: np.ndarray) -> np.ndarray:
    """The bytes of a C-contiguous array, as a 1-D uint8 view (no copy)."""
    return np.ascontiguousarray(array).reshape(-1).view(np.uint8)


def _free(address: int) -> None:
    try:
        device().free(address)
    except Exception:  # the emulator is gone at exit: the memory goes with it
        pass


class Allocation:
    """Bytes of the emulator's global memory, freed when the last reference goes."""

    def __init__(self, nbytes: int, label: str = "", *, uninit: bool = True):
        self.nbytes = int(nbytes)
        self.label = label or f"buffer_{next(_names)}"
        # A zero-byte allocation still needs an address of its own.
        self.address = device().alloc(max(self.nbytes, 1), self.label, uninit=uninit)
        self._finalizer = weakref.finalize(self, _free, self.address)

    def free(self) -> None:
        self._finalizer()

    def relabel(self, label: str) -> None:
        """Names the buffer in reports (``hist[65]``)."""
        self.label = label
        device().relabel(self.address, label)


def _binary(op, reflected: bool = False):
    def method(self, other):
        other_host = other.get() if isinstance(other, DeviceArray) else other
        mine = self.get()
        result = op(other_host, mine) if reflected else op(mine, other_host)
        return self._like_host(np.asarray(result))

    return method


def _in_place(op):
    def method(self, other):
        other_host = other.get() if isinstance(other, DeviceArray) else other
        result = op(self.get(), other_host)
        self.set(np.asarray(result, dtype=self.dtype))
        return self

    return method


class DeviceArray:
    """A C-contiguous array in the emulator's memory."""

    def __init__(
        self, shape, dtype, *, allocation: Optional[Allocation] = None, offset: int = 0, uninit: bool = True
    ):
        if isinstance(shape, (int, np.integer)):
            shape = (int(shape),)
        self.shape = tuple(int(s) for s in shape)
        self.dtype = np.dtype(dtype)
        self.size = int(np.prod(self.shape, dtype=np.int64)) if self.shape else 1
        self.nbytes = self.size * self.dtype.itemsize
        if allocation is None:
            allocation = Allocation(self.nbytes, uninit=uninit)
        self._allocation = allocation
        self._offset = int(offset)

    # -- what kernels see --------------------------------------------------------------------

    @property
    def ptr(self) -> int:
        """The device address of the first element."""
        return self._allocation.address + self._offset

    @property
    def starts_allocation(self) -> bool:
        """Whether the array is the start of an allocation of its own (not borrowed memory)."""
        return isinstance(self._allocation, Allocation) and self._offset == 0

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def itemsize(self) -> int:
        return self.dtype.itemsize

    @property
    def strides(self):
        strides, step = [], self.dtype.itemsize
        for extent in reversed(self.shape):
            strides.append(step)
            step *= max(extent, 1)
        return tuple(reversed(strides))

    @property
    def __cuda_array_interface__(self):
        return {
            "shape": self.shape,
            "strides": None,
            "typestr": self.dtype.str,
            "data": (self.ptr, False),
            "version": 3,
        }

    def relabel(self, label: str) -> "DeviceArray":
        """Names the array in reports: a race on it reads ``hist[65]``, not ``buffer_3[65]``."""
        self._allocation.relabel(label)
        return self

    # -- copies ------------------------------------------------------------------------------

    def set(self, ary, stream=None) -> None:
        """Copies a host array of the same size into this one: queued on ``stream`` when given,
        else on the legacy default stream with the host waiting (``racetrack/_streams.py``)."""
        host = np.asarray(ary)
        if host.size != self.size:
            raise ValueError(f"copy of {host.size} elements into a device array of {self.size}")
        host = np.ascontiguousarray(host, dtype=self.dtype)
        if self.nbytes:
            _streams.copy_to_device(self.ptr, bytes_view(host), _streams.native(stream), where)

    def get(self, ary: Optional[np.ndarray] = None, stream=None) -> np.ndarray:
        """The contents as a NumPy array (into ``ary`` when given), copied on ``stream`` as
        :meth:`set` is."""
        staging = np.empty(self.shape, dtype=self.dtype)
        if self.nbytes:
            view = staging.reshape(-1).view(np.uint8)
            _streams.copy_to_host(self.ptr, view, _streams.native(stream), where)
        if ary is None:
            return staging
        if ary.size != self.size:
            raise ValueError(f"copy of {self.size} elements into a host array of {ary.size}")
        ary.reshape(-1)[...] = staging.reshape(-1)
        return ary

    def _like_host(self, host: np.ndarray) -> "DeviceArray":
        """A new array of this type holding ``host``."""
        made = self._new(host.shape, host.dtype)
        made.set(host)
        return made

    def _new(self, shape, dtype) -> "DeviceArray":
        return type(self)(shape, dtype)

    def copy(self, stream=None) -> "DeviceArray":
        made = self._new(self.shape, self.dtype)
        _streams.copy_on_device(made.ptr, self.ptr, self.nbytes, _streams.native(stream), where)
        return made

    def fill(self, value) -> "DeviceArray":
        self.set(np.full(self.shape, value, dtype=self.dtype))
        return self

    def astype(self, dtype) -> "DeviceArray":
        return self._like_host(self.get().astype(dtype))

    def reshape(self, *shape, order: str = "C") -> "DeviceArray":
        """A view with another shape (same memory)."""
        if order != "C":
            raise NotImplementedError("only C-order reshapes of device arrays are supported")
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = tuple(shape[0])
        resolved = np.broadcast_to(np.empty((), np.uint8), (self.size,)).reshape(shape).shape
        view = object.__new__(type(self))
        view.__dict__.update(self.__dict__)
        view.shape = tuple(resolved)
        return view

    def ravel(self) -> "DeviceArray":
        return self.reshape(self.size)

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of a 0-d array")
        return self.shape[0]

    def __array__(self, dtype=None, copy=None):
        host = self.get()
        return host if dtype is None else host.astype(dtype)

    # -- host-side arithmetic ----------------------------------------------------------------

    __add__ = _binary(operator.add)
    __radd__ = _binary(operator.add, reflected=True)
    __sub__ = _binary(operator.sub)
    __rsub__ = _binary(operator.sub, reflected=True)
    __mul__ = _binary(operator.mul)
    __rmul__ = _binary(operator.mul, reflected=True)
    __truediv__ = _binary(operator.truediv)
    __rtruediv__ = _binary(operator.truediv, reflected=True)
    __pow__ = _binary(operator.pow)
    __iadd__ = _in_place(operator.add)
    __isub__ = _in_place(operator.sub)
    __imul__ = _in_place(operator.mul)
    __itruediv__ = _in_place(operator.truediv)

    def __neg__(self):
        return self._like_host(-self.get())

    def __abs__(self):
        return self._like_host(np.abs(self.get()))

    def sum(self, dtype=None):
        return self._like_host(np.asarray(self.get().sum(dtype=dtype)))

    def max(self):
        return self._like_host(np.asarray(self.get().max()))

    def min(self):
        return self._like_host(np.asarray(self.get().min()))

    def item(self):
        return self.get().item()

    def __float__(self):
        return float(self.get())

    def __int__(self):
        return int(self.get())
