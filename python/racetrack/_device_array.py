"""What PyCUDA's ``GPUArray`` and CuPy's ``ndarray`` share: an array in the emulator's global
memory, with a shape and byte strides over an allocation, so that indexing and slicing give
views of the same memory (a write through a view reaches its base), as both libraries do.

The host-side work a tutorial does between kernels (``a + b``, ``a[1:3] = 0``, ``a.sum()``) is
done with NumPy on a copy read from the emulator, and written back where it changes the array:
the kernels a learner writes are what the checkers are for, not these. Every such operation
reads and writes the emulator's memory when it is called, in program order, as the library's
operations on the null stream are ordered."""

from __future__ import annotations

import itertools
import operator
import weakref
from types import SimpleNamespace
from typing import Optional, Tuple

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


def c_strides(shape, itemsize: int) -> Tuple[int, ...]:
    strides, step = [], itemsize
    for extent in reversed(shape):
        strides.append(step)
        step *= max(extent, 1)
    return tuple(reversed(strides))


def _is_basic_index(part) -> bool:
    return part is None or part is Ellipsis or isinstance(part, (slice, int, np.integer))


def _operand(value, library: str):
    """A host value for NumPy to compute with: a device array's contents, or a scalar."""
    if isinstance(value, DeviceArray):
        return value.get()
    if isinstance(value, np.ndarray) and value.ndim > 0:
        # Both libraries refuse host arrays here; NumPy would silently compute on the host.
        raise TypeError(
            f"Unsupported type {type(value)}: a NumPy array is host memory, and {library} does "
            f"not mix it with device arrays; copy it to the device first"
        )
    return value


def _binary(op, reflected: bool = False):
    def method(self, other):
        if not isinstance(other, (DeviceArray, np.ndarray, np.generic, int, float, complex, bool)):
            return NotImplemented
        theirs = _operand(other, self._library)
        mine = self.get()
        result = op(theirs, mine) if reflected else op(mine, theirs)
        return self._like_host(np.asarray(result))

    return method


def _in_place(ufunc):
    def method(self, other):
        host = self.get()
        # NumPy's casting rule for out= (same_kind) is the libraries' rule for in-place ops.
        ufunc(host, _operand(other, self._library), out=host)
        self._write_host(host)
        return self

    return method


class _Borrowed:
    """Memory an array views but another object owns (CUDA Array Interface memory): never
    freed here; the owner is kept alive while the view is."""

    def __init__(self, address: int, owner):
        self.address = int(address)
        self._owner = owner

    def relabel(self, label: str) -> None:
        # Only the start of an allocation has a name; a view into one keeps its owner's.
        try:
            device().relabel(self.address, label)
        except Exception:
            pass


#: Elements a large fill writes at a time.
_FILL_CHUNK = 1 << 22


class DeviceArray:
    """An array in the emulator's memory: ``shape`` and byte ``strides`` over an allocation,
    starting ``_offset`` bytes into it."""

    #: What the face's library raises when the device has no room (PyCUDA's
    #: ``pycuda.driver.MemoryError``, CuPy's ``OutOfMemoryError``).
    _out_of_memory = MemoryError

    #: The library's name, for messages (``cupy``, ``pycuda.gpuarray``).
    _library = "racetrack"
    #: Whether indexing with integer arrays and boolean masks is the library's (CuPy's is).
    _fancy_indexing = False
    # NumPy defers to our reflected operators (``np_scalar * a``) instead of converting ``a``.
    __array_ufunc__ = None

    def __init__(
        self, shape, dtype, *, allocation: Optional[Allocation] = None, offset: int = 0, uninit: bool = True
    ):
        if isinstance(shape, (int, np.integer)):
            shape = (int(shape),)
        self.shape = tuple(int(s) for s in shape)
        if any(extent < 0 for extent in self.shape):
            raise ValueError(f"negative dimensions are not allowed: {self.shape}")
        self.dtype = np.dtype(dtype)
        self.strides = c_strides(self.shape, self.dtype.itemsize)
        if allocation is None:
            try:
                allocation = Allocation(self.nbytes, uninit=uninit)
            except MemoryError as error:
                raise self._out_of_memory(str(error)) from None
        self._allocation = allocation
        self._offset = int(offset)
        self.base = None

    @classmethod
    def over_interface(cls, obj) -> "DeviceArray":
        """An array of this type viewing ``obj``'s device memory, described by its CUDA Array
        Interface (a Numba device array): no copy, writes reach ``obj``."""
        interface = obj.__cuda_array_interface__
        if interface.get("mask") is not None:
            raise NotImplementedError(f"masked CUDA arrays are not implemented in racetrack's {cls._library}")
        dtype = np.dtype(interface["typestr"])
        shape = tuple(int(extent) for extent in interface["shape"])
        strides = interface.get("strides")
        view = object.__new__(cls)
        view.shape = shape
        view.dtype = dtype
        view.strides = c_strides(shape, dtype.itemsize) if strides is None else tuple(int(s) for s in strides)
        view._allocation = _Borrowed(int(interface["data"][0]), obj)
        view._offset = 0
        view.base = obj
        return view

    # -- shape and layout --------------------------------------------------------------------

    @property
    def size(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64))

    @property
    def nbytes(self) -> int:
        return self.size * self.dtype.itemsize

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def itemsize(self) -> int:
        return self.dtype.itemsize

    def _layout(self) -> np.ndarray:
        """A NumPy array of this shape and these strides that is never read: NumPy works out
        views, offsets and contiguity on it."""
        return np.lib.stride_tricks.as_strided(
            np.zeros(1, self.dtype), shape=self.shape, strides=self.strides, writeable=False
        )

    @property
    def flags(self):
        layout = self._layout().flags
        c, f = bool(layout.c_contiguous), bool(layout.f_contiguous)
        return SimpleNamespace(
            c_contiguous=c, f_contiguous=f, forc=c or f, owndata=self.base is None
        )

    @property
    def ptr(self) -> int:
        """The device address of the first element."""
        return self._allocation.address + self._offset

    @property
    def starts_allocation(self) -> bool:
        """Whether the array is the start of an allocation of its own (not borrowed memory)."""
        return isinstance(self._allocation, Allocation) and self._offset == 0

    @property
    def __cuda_array_interface__(self):
        return {
            "shape": self.shape,
            "strides": None if self.flags.c_contiguous else self.strides,
            "typestr": self.dtype.str,
            "data": (self.ptr, False),
            "version": 3,
        }

    def relabel(self, label: str) -> "DeviceArray":
        """Names the array in reports: a race on it reads ``hist[65]``, not ``buffer_3[65]``."""
        self._allocation.relabel(label)
        return self

    # -- views -------------------------------------------------------------------------------

    def _view(self, shape, strides, offset_bytes: int = 0, dtype=None) -> "DeviceArray":
        view = object.__new__(type(self))
        view.__dict__.update(self.__dict__)
        view.shape = tuple(int(s) for s in shape)
        view.strides = tuple(int(s) for s in strides)
        view.dtype = self.dtype if dtype is None else np.dtype(dtype)
        view._offset = self._offset + int(offset_bytes)
        view.base = self if self.base is None else self.base
        return view

    def _locate(self, key):
        """(shape, strides, byte offset) of ``self[key]`` for ints, slices, ``...`` and
        ``None``; worked out by NumPy on the layout, so no element is read."""
        if not isinstance(key, tuple):
            key = (key,)
        if any(part is Ellipsis for part in key):
            at = next(i for i, part in enumerate(key) if part is Ellipsis)
            reaching = sum(1 for part in key if part is not None and part is not Ellipsis)
            key = key[:at] + (slice(None),) * (self.ndim - reaching) + key[at + 1 :]
        reaching = sum(1 for part in key if part is not None)
        if reaching > self.ndim:
            raise IndexError(
                f"too many indices for array: array is {self.ndim}-dimensional, but {reaching} were indexed"
            )
        # One extra unit axis that the key never reaches keeps the result an array (NumPy would
        # read an element for a full integer index), so nothing is ever read.
        key = key + (slice(None),) * (self.ndim - reaching) + (slice(None),)
        layout = np.lib.stride_tricks.as_strided(
            np.zeros(1, self.dtype),
            shape=self.shape + (1,),
            strides=self.strides + (self.dtype.itemsize,),
            writeable=False,
        )
        picked = layout[key]
        offset = picked.__array_interface__["data"][0] - layout.__array_interface__["data"][0]
        return picked.shape[:-1], picked.strides[:-1], offset

    def _basic_key(self, key) -> bool:
        parts = key if isinstance(key, tuple) else (key,)
        if all(_is_basic_index(part) for part in parts):
            return True
        if not self._fancy_indexing:
            raise NotImplementedError(
                f"indexing a {type(self).__name__} with {type(key).__name__} "
                f"({key!r}) is not implemented in racetrack's {self._library}; "
                "use ints, slices, ... and None"
            )
        return False

    def __getitem__(self, key) -> "DeviceArray":
        """A view of the same memory (a 0-d array for one element), as both libraries give."""
        if isinstance(key, DeviceArray):
            key = key.get()
        if not self._basic_key(key):
            # Integer arrays and masks give a copy, as in NumPy and CuPy.
            return self._like_host(np.asarray(self.get()[key]))
        shape, strides, offset = self._locate(key)
        return self._view(shape, strides, offset)

    def __setitem__(self, key, value) -> None:
        if isinstance(key, DeviceArray):
            key = key.get()
        if not self._basic_key(key):
            host = self.get()
            host[key] = _operand(value, self._library) if isinstance(value, DeviceArray) else value
            self._write_host(host)
            return
        shape, strides, offset = self._locate(key)
        self._view(shape, strides, offset)._assign(value)

    def _assign(self, value) -> None:
        """``self[...] = value``: NumPy's broadcasting and casting, then one write."""
        host = value.get() if isinstance(value, DeviceArray) else value
        staging = np.empty(self.shape, self.dtype)
        staging[...] = host
        self._write_host(staging)

    @property
    def T(self) -> "DeviceArray":  # noqa: N802 (the libraries' name)
        return self.transpose()

    def transpose(self, *axes) -> "DeviceArray":
        """A view with the axes reversed (or in the order given)."""
        if len(axes) == 1 and isinstance(axes[0], (tuple, list)):
            axes = tuple(axes[0])
        moved = self._layout().transpose(*axes) if axes else self._layout().T
        return self._view(moved.shape, moved.strides)

    def reshape(self, *shape, order: str = "C") -> "DeviceArray":
        """A view with another shape when the array is C-contiguous, else a reshaped copy (as
        CuPy and NumPy do)."""
        if order != "C":
            raise NotImplementedError(f"reshape(order={order!r}) is not implemented in racetrack's {self._library}")
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = tuple(shape[0])
        resolved = np.broadcast_to(np.empty((), np.uint8), (self.size,)).reshape(shape).shape
        source = self if self.flags.c_contiguous else self.copy()
        return source._view(resolved, c_strides(resolved, self.dtype.itemsize))

    def ravel(self, order: str = "C") -> "DeviceArray":
        return self.reshape(self.size, order=order)

    def flatten(self) -> "DeviceArray":
        return self.copy().reshape(self.size)

    def squeeze(self, axis=None) -> "DeviceArray":
        squeezed = self._layout().squeeze(axis=axis)
        return self._view(squeezed.shape, squeezed.strides)

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of unsized object")
        return self.shape[0]

    def __iter__(self):
        if not self.shape:
            raise TypeError("iteration over a 0-d array")
        return (self[i] for i in range(self.shape[0]))

    def __array__(self, dtype=None, copy=None):
        host = self.get()
        return host if dtype is None else host.astype(dtype)

    # -- copies between host and device -------------------------------------------------------

    def _span(self) -> Tuple[int, int]:
        """The bytes the array covers, from its first element: (lowest, one past the highest)."""
        if self.size == 0:
            return 0, 0
        low = sum(min(0, (n - 1) * s) for n, s in zip(self.shape, self.strides))
        high = sum(max(0, (n - 1) * s) for n, s in zip(self.shape, self.strides))
        return low, high + self.dtype.itemsize

    def _read_window(self, stream_id: Optional[int] = None):
        """The device bytes under the array, and the array over them (host memory); copied on
        ``stream_id`` as :meth:`get` is."""
        low, high = self._span()
        window = np.empty(high - low, np.uint8)
        if window.size:
            _streams.copy_to_host(self.ptr + low, window, stream_id, where)
        host = np.ndarray(self.shape, self.dtype, buffer=window, offset=-low, strides=self.strides)
        return window, low, host

    def _read_host(self, stream_id: Optional[int] = None) -> np.ndarray:
        """The contents, as a new C-contiguous NumPy array, copied on ``stream_id`` (``None``:
        the legacy default stream, the host waiting)."""
        if self.flags.c_contiguous:
            staging = np.empty(self.shape, dtype=self.dtype)
            if self.nbytes:
                _streams.copy_to_host(self.ptr, staging.reshape(-1).view(np.uint8), stream_id, where)
            return staging
        return np.array(self._read_window(stream_id)[2], order="C")

    def _write_host(self, host: np.ndarray, stream_id: Optional[int] = None) -> None:
        """Writes ``host`` (this shape, NumPy's casting to this dtype) into the array's
        elements, copied on ``stream_id`` as :meth:`_read_host` is. A strided view reads the
        bytes it spans and writes them back with its elements changed, both on the stream, so
        the bytes between its elements keep their values (and are racechecked as touched)."""
        host = np.broadcast_to(np.asarray(host, dtype=self.dtype), self.shape)
        if not self.size:
            return
        if self.flags.c_contiguous:
            _streams.copy_to_device(self.ptr, bytes_view(host), stream_id, where)
            return
        window, low, view = self._read_window(stream_id)
        view[...] = host
        _streams.copy_to_device(self.ptr + low, window, stream_id, where)

    def set(self, ary, stream=None) -> None:
        """Copies a host array of the same size into this one: queued on ``stream`` when given,
        else on the legacy default stream with the host waiting (``racetrack/_streams.py``)."""
        host = np.asarray(ary)
        if host.size != self.size:
            raise ValueError(f"copy of {host.size} elements into a device array of {self.size}")
        self._write_host(host.reshape(self.shape), _streams.native(stream))

    def get(self, ary: Optional[np.ndarray] = None, stream=None) -> np.ndarray:
        """The contents as a NumPy array (into ``ary`` when given), copied on ``stream`` as
        :meth:`set` is."""
        staging = self._read_host(_streams.native(stream))
        if ary is None:
            return staging
        if ary.size != self.size:
            raise ValueError(f"copy of {self.size} elements into a host array of {ary.size}")
        ary.reshape(-1)[...] = staging.reshape(-1)
        return ary

    def _like_host(self, host: np.ndarray) -> "DeviceArray":
        """A new array of this type holding ``host``."""
        made = self._new(host.shape, host.dtype)
        made._write_host(host)
        return made

    def _new(self, shape, dtype) -> "DeviceArray":
        return type(self)(shape, dtype)

    def copy(self, stream=None) -> "DeviceArray":
        """A new C-contiguous array with the same contents, copied on ``stream`` (``None``: the
        legacy default stream)."""
        made = self._new(self.shape, self.dtype)
        if self.flags.c_contiguous:
            _streams.copy_on_device(made.ptr, self.ptr, self.nbytes, _streams.native(stream), where)
        else:
            # A strided view goes through the host, both copies on the stream.
            stream_id = _streams.native(stream)
            made._write_host(self._read_host(stream_id), stream_id)
        return made

    def fill(self, value) -> "DeviceArray":
        if not self.flags.c_contiguous or self.size <= _FILL_CHUNK:
            self._write_host(np.full(self.shape, value, dtype=self.dtype))
            return self
        # A large array is filled a chunk at a time: a host copy of it all may not fit where
        # the device's memory is already the host's (a GPU-sized fill on a laptop).
        chunk = np.full(_FILL_CHUNK, value, dtype=self.dtype)
        for start in range(0, self.size, _FILL_CHUNK):
            part = chunk[: min(_FILL_CHUNK, self.size - start)]
            _streams.copy_to_device(self.ptr + start * self.dtype.itemsize, bytes_view(part), None, where)
        return self

    def astype(self, dtype, copy: bool = True) -> "DeviceArray":
        if not copy and np.dtype(dtype) == self.dtype:
            return self
        return self._like_host(self.get().astype(dtype))

    # -- host-side arithmetic ----------------------------------------------------------------

    __add__ = _binary(operator.add)
    __radd__ = _binary(operator.add, reflected=True)
    __sub__ = _binary(operator.sub)
    __rsub__ = _binary(operator.sub, reflected=True)
    __mul__ = _binary(operator.mul)
    __rmul__ = _binary(operator.mul, reflected=True)
    __truediv__ = _binary(operator.truediv)
    __rtruediv__ = _binary(operator.truediv, reflected=True)
    __floordiv__ = _binary(operator.floordiv)
    __rfloordiv__ = _binary(operator.floordiv, reflected=True)
    __mod__ = _binary(operator.mod)
    __rmod__ = _binary(operator.mod, reflected=True)
    __pow__ = _binary(operator.pow)
    __rpow__ = _binary(operator.pow, reflected=True)
    __and__ = _binary(operator.and_)
    __rand__ = _binary(operator.and_, reflected=True)
    __or__ = _binary(operator.or_)
    __ror__ = _binary(operator.or_, reflected=True)
    __xor__ = _binary(operator.xor)
    __rxor__ = _binary(operator.xor, reflected=True)
    __iadd__ = _in_place(np.add)
    __isub__ = _in_place(np.subtract)
    __imul__ = _in_place(np.multiply)
    __itruediv__ = _in_place(np.true_divide)
    __ifloordiv__ = _in_place(np.floor_divide)
    __imod__ = _in_place(np.remainder)
    __ipow__ = _in_place(np.power)

    def __neg__(self):
        return self._like_host(-self.get())

    def __pos__(self):
        return self._like_host(+self.get())

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

    def tolist(self):
        return self.get().tolist()

    def __float__(self):
        return float(self.get())

    def __int__(self):
        return int(self.get())

    def __bool__(self):
        return bool(self.get())
