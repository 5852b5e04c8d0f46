"""Device arrays in the emulator's memory, as Numba's ``DeviceNDArray`` behaves: made by
``to_device`` and ``device_array``, copied with ``copy_to_host``/``copy_to_device``, indexed and
sliced into views of the same memory.

Mapped and managed memory (``mapped_array``, ``managed_array``, ``cuda.mapped(...)``) is memory
both sides see. The emulator's memory is its own, so such an allocation keeps a host buffer
beside it: the host's bytes go to the device before every launch and copy that uses it, and
come back after, so that the host reads what a kernel wrote (after ``cuda.synchronize()``, as
on a GPU; here launches end when issued, so already right after the launch)."""

from __future__ import annotations

import itertools
import weakref
from typing import Optional, Tuple

import numpy as np

from .. import _core
from .._core import device
from .._cuda_c import user_facing as _user_facing
from .._cuda_c import where as _user_where
from ._streams import native_stream, synchronize_device


def _synchronize_device_of(array: "DeviceNDArray") -> None:
    """A copy on the legacy default stream starts after everything queued on the array's
    device, and the host waits for it: the host is then ordered after that device's streams."""
    synchronize_device(array._allocation.device_id)


def _raise_stream_findings(findings, what: str) -> None:
    """A copy on a stream that races with other streams' work fails as a launch would."""
    _core.report_findings(findings, what)


def _host_copy_stream(array: "DeviceNDArray", stream) -> Optional[int]:
    """The emulator's stream a copy between ``array`` and the host queues on: ``stream``, else the
    stream the array is bound to (``bind``), as Numba picks it; ``None`` for the legacy default
    stream. A strided view is copied on it as numba-cuda copies one: the bytes it spans."""
    return native_stream(stream or array.stream)


_names = itertools.count(1)


def _bytes_view(array: np.ndarray) -> np.ndarray:
    """The bytes of a contiguous array, as a 1-D uint8 view (no copy)."""
    return np.ravel(array, order="K").view(np.uint8)


def _free(address: int) -> None:
    try:
        device().free(address)
    except Exception:  # the emulator is busy or gone at exit: the memory goes with it
        pass


class _Allocation:
    """Device memory, freed when the last array viewing it is gone. ``host``, for mapped and
    managed memory, is the host buffer (1-D uint8) the same bytes live in on the host side."""

    def __init__(self, nbytes: int, label: str, uninit: bool, host: Optional[np.ndarray] = None):
        # On the current device (``with cuda.gpus[i]:``), as Numba allocates in the current context.
        self.device_id = device().current_device
        self.address = device().alloc(nbytes, label, uninit=uninit)
        self.host = host
        weakref.finalize(self, _free, self.address)
        self.push()

    def push(self) -> None:
        """Mapped memory: what the host wrote, to the device (before the device reads it)."""
        if self.host is not None and self.host.size:
            device().write(self.address, self.host)

    def pull(self) -> None:
        """Mapped memory: what the device wrote, to the host (after the device is done)."""
        if self.host is not None and self.host.size:
            device().read_into(self.address, self.host)


def _contiguous_strides(shape, itemsize: int, order: str) -> Tuple[int, ...]:
    strides = []
    step = itemsize
    axes = range(len(shape))
    for axis in reversed(axes) if order == "C" else axes:
        strides.append(step)
        step *= max(shape[axis], 1)
    if order == "C":
        strides.reverse()
    return tuple(strides)


class DeviceNDArray:
    """An array in the emulator's global memory. Indexing with ints, slices and ``...`` gives
    a view of the same memory (an element comes back as a NumPy scalar), as Numba's does."""

    __cuda_memory__ = True

    def __init__(
        self,
        shape,
        dtype,
        order: str = "C",
        *,
        uninit: bool = True,
        label: str = "",
    ):
        if isinstance(shape, (int, np.integer)):
            shape = (int(shape),)
        self.shape = tuple(int(s) for s in shape)
        self.dtype = np.dtype(dtype)
        self.strides = _contiguous_strides(self.shape, self.dtype.itemsize, order)
        self.label = label or f"device_array_{next(_names)}"
        try:
            self._allocation = _Allocation(self.nbytes, self.label, uninit)
        except MemoryError as error:
            from numba.cuda.cudadrv.driver import CudaAPIError

            # Numba's own error for a cuMemAlloc the device has no room for.
            raise CudaAPIError(2, f"Call to cuMemAlloc results in CUDA_ERROR_OUT_OF_MEMORY ({error})") from None
        self._offset = 0
        self.stream = 0

    # -- shape and layout --

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
    def address(self) -> int:
        """The device address of the array's first element in the emulator."""
        return self._allocation.address + self._offset

    @property
    def device_ctypes_pointer_value(self) -> int:
        return self.address

    def _layout(self) -> np.ndarray:
        """A NumPy array of this shape and these strides that is never read: NumPy works out
        views, offsets and contiguity on it, and no element is touched."""
        return np.lib.stride_tricks.as_strided(
            np.zeros(1, self.dtype), shape=self.shape, strides=self.strides, writeable=False
        )

    def is_c_contiguous(self) -> bool:
        return bool(self._layout().flags.c_contiguous)

    def is_f_contiguous(self) -> bool:
        return bool(self._layout().flags.f_contiguous)

    def get_numba_type_layout(self) -> str:
        if self.is_c_contiguous():
            return "C"
        if self.is_f_contiguous():
            return "F"
        return "A"

    def __len__(self) -> int:
        return self.shape[0]

    def __repr__(self) -> str:
        return f"<racetrack DeviceNDArray shape={self.shape} dtype={self.dtype}>"

    @property
    def __cuda_array_interface__(self):
        return {
            "shape": self.shape,
            "strides": None if self.is_c_contiguous() else self.strides,
            "typestr": self.dtype.str,
            "data": (self.address, False),
            "version": 3,
        }

    # -- views --

    def _view(self, shape, strides, offset_bytes: int) -> "DeviceNDArray":
        view = object.__new__(DeviceNDArray)
        view.shape = tuple(int(s) for s in shape)
        view.dtype = self.dtype
        view.strides = tuple(int(s) for s in strides)
        view.label = self.label
        view._allocation = self._allocation
        view._offset = self._offset + int(offset_bytes)
        view.stream = self.stream
        return view

    def _locate(self, key):
        """(shape, strides, byte offset) of ``self[key]``."""
        if not isinstance(key, tuple):
            key = (key,)
        for part in key:
            if part is None or isinstance(part, (list, np.ndarray, DeviceNDArray)):
                raise IndexError("a device array takes ints, slices and ... as indices")
        if any(part is Ellipsis for part in key):
            at = next(i for i, part in enumerate(key) if part is Ellipsis)
            missing = self.ndim - (len(key) - 1)
            key = key[:at] + (slice(None),) * missing + key[at + 1 :]
        # One extra unit axis that the key never reaches keeps the result an array (NumPy would
        # read an element for a full integer index), so nothing is ever read.
        layout = np.lib.stride_tricks.as_strided(
            np.zeros(1, self.dtype),
            shape=self.shape + (1,),
            strides=self.strides + (self.dtype.itemsize,),
            writeable=False,
        )
        picked = layout[key]
        offset = picked.__array_interface__["data"][0] - layout.__array_interface__["data"][0]
        return picked.shape[:-1], picked.strides[:-1], offset

    def __getitem__(self, key):
        shape, strides, offset = self._locate(key)
        if shape == ():
            self._allocation.push()
            element = np.empty(1, self.dtype)
            device().read_into(self.address + offset, element.view(np.uint8))
            return element[0]
        return self._view(shape, strides, offset)

    def __setitem__(self, key, value) -> None:
        shape, strides, offset = self._locate(key)
        if shape == ():
            device().write(self.address + offset, np.array([value], self.dtype).view(np.uint8))
            self._allocation.pull()
            return
        view = self._view(shape, strides, offset)
        # Numba assigns with a kernel, which casts and broadcasts and takes any layout: not
        # copy_to_device's rules.
        view.copy_to_device(np.broadcast_to(np.asarray(value, self.dtype), shape), _as_copy=False)

    def reshape(self, *newshape, order: str = "C") -> "DeviceNDArray":
        """A view with another shape; the array must be contiguous in ``order``."""
        if len(newshape) == 1 and isinstance(newshape[0], (tuple, list)):
            newshape = tuple(newshape[0])
        contiguous = self.is_c_contiguous() if order == "C" else self.is_f_contiguous()
        if not contiguous:
            raise NotImplementedError(f"reshape of a device array that is not {order}-contiguous")
        shape = self._layout().reshape(newshape, order=order).shape
        return self._view(shape, _contiguous_strides(shape, self.dtype.itemsize, order), 0)

    def ravel(self, order: str = "C", stream=0) -> "DeviceNDArray":
        return self.reshape(self.size, order=order)

    def split(self, section: int, stream=0):
        """Views of ``section`` elements each (the last may be shorter), as Numba's: 1-D arrays
        of unit stride only."""
        if self.ndim != 1:
            raise ValueError("only support 1d array")
        if self.strides[0] != self.dtype.itemsize:
            raise ValueError("only support unit stride")
        itemsize = self.dtype.itemsize
        for begin in range(0, self.size, int(section)):
            end = min(begin + int(section), self.size)
            yield self._view((end - begin,), self.strides, begin * itemsize)

    def squeeze(self, axis=None, stream=0) -> "DeviceNDArray":
        """A view without the axes of length one (those of ``axis`` when given)."""
        squeezed = self._layout().squeeze(axis=axis)
        return self._view(squeezed.shape, squeezed.strides, 0)

    def bind(self, stream=0) -> "DeviceNDArray":
        """The same array with ``stream`` as its default stream (work is done when issued)."""
        view = self._view(self.shape, self.strides, 0)
        view.stream = stream
        return view

    def view(self, dtype) -> "DeviceNDArray":
        """The same bytes read as another dtype of the same size."""
        dtype = np.dtype(dtype)
        if dtype.itemsize != self.dtype.itemsize:
            raise ValueError(f"a device array view must keep the item size ({self.dtype.itemsize} bytes)")
        view = self._view(self.shape, self.strides, 0)
        view.dtype = dtype
        return view

    # -- copies --

    def _span(self) -> Tuple[int, int]:
        """The bytes the array covers, from its first element: (lowest, one past the highest)."""
        low = sum(min(0, (n - 1) * s) for n, s in zip(self.shape, self.strides))
        high = sum(max(0, (n - 1) * s) for n, s in zip(self.shape, self.strides))
        return low, high + self.dtype.itemsize

    def _host_window(self):
        """The device bytes under the array, copied to the host, and the array over them."""
        low, high = self._span()
        self._allocation.push()
        window = np.empty(high - low, np.uint8)
        device().read_into(self.address + low, window)
        host = np.ndarray(self.shape, self.dtype, buffer=window, offset=-low, strides=self.strides)
        return window, low, host

    def _stream_window(self, stream_id: int, where: str):
        """As :meth:`_host_window`, the bytes copied to the host queued on ``stream_id``."""
        low, high = self._span()
        window = np.empty(high - low, np.uint8)
        _core.copy_to_host_on(stream_id, self.address + low, window, where=where)
        host = np.ndarray(self.shape, self.dtype, buffer=window, offset=-low, strides=self.strides)
        return window, low, host

    @_user_facing
    def copy_to_device(self, ary, stream=0, *, _as_copy: bool = True) -> None:
        """Copies a host array (or another device array, on any device) into this one, with
        numba-cuda's checks: both contiguous, the same dtype (``TypeError: incompatible
        dtype``), shape and strides (``ValueError``). A copy between device arrays on a stream
        is queued there: racecheck orders it with the other streams' work, as a launch on it."""
        if _as_copy:
            if np.size(ary) == 0:
                return
            ary = _checked_copy_source(self, ary)
        if isinstance(ary, DeviceNDArray):
            stream_id = native_stream(stream)
            if ary.size != self.size or ary.dtype != self.dtype:
                raise ValueError(
                    f"copy of a {ary.dtype}[{ary.size}] device array into a {self.dtype}[{self.size}] one"
                )
            both_contiguous = ary.is_c_contiguous() and self.is_c_contiguous()
            if stream_id is not None and both_contiguous and self.size:
                findings = device().copy_on(stream_id, self.address, ary.address, self.nbytes)
                _raise_stream_findings(findings, "copy_to_device")
                return
            _synchronize_device_of(ary)
            ary = ary.copy_to_host()
        host = np.asarray(ary, dtype=self.dtype)
        if host.size != self.size:
            raise ValueError(f"copy of {host.size} elements into a device array of {self.size}")
        host = np.reshape(host, self.shape)
        stream_id = _host_copy_stream(self, stream)
        if stream_id is not None and self._allocation.host is None:
            # Queued on the stream (cudaMemcpyAsync): ordered after its work, checked against the rest.
            where = _user_where()
            if self.is_c_contiguous() or self.is_f_contiguous():
                in_order = np.ascontiguousarray(host) if self.is_c_contiguous() else np.asfortranarray(host)
                _core.copy_from_host_on(stream_id, self.address, _bytes_view(in_order), where=where)
                return
            # A strided view: the bytes it spans are read and written back on the stream, with
            # its elements changed and the bytes between them as they were.
            window, low, view = self._stream_window(stream_id, where)
            view[...] = host
            _core.copy_from_host_on(stream_id, self.address + low, window, where=where)
            return
        _synchronize_device_of(self)
        if self.size == 0:
            return
        if self.is_c_contiguous():
            device().write(self.address, _bytes_view(np.ascontiguousarray(host)))
        elif self.is_f_contiguous():
            device().write(self.address, _bytes_view(np.asfortranarray(host)))
        else:
            window, low, view = self._host_window()
            view[...] = host
            device().write(self.address + low, window)
        self._allocation.pull()

    @_user_facing
    def copy_to_host(self, ary: Optional[np.ndarray] = None, stream=0, *, _as_copy: bool = True) -> np.ndarray:
        """The array's contents in host memory: into ``ary`` when given, else a new array."""
        if any(stride < 0 for stride in self.strides):
            raise NotImplementedError(f"D->H copy not implemented for negative strides: {self.strides}")
        if ary is not None and _as_copy:
            _check_array_compatibility(self._layout(), ary)
        order = "F" if self.is_f_contiguous() and not self.is_c_contiguous() else "C"
        if ary is None:
            ary = np.empty(self.shape, dtype=self.dtype, order=order)
        if ary.size != self.size or ary.dtype != self.dtype:
            raise ValueError(
                f"copy of a {self.dtype}[{self.size}] device array into a {ary.dtype}[{ary.size}] host array"
            )
        if self.size == 0:
            return ary
        stream_id = _host_copy_stream(self, stream)
        same_layout = (self.is_c_contiguous() and ary.flags.c_contiguous) or (
            self.is_f_contiguous() and ary.flags.f_contiguous and ary.shape == self.shape
        )
        if stream_id is not None and self._allocation.host is None:
            # Queued on the stream (cudaMemcpyAsync): ordered after its work, checked against the rest.
            if same_layout:
                _core.copy_to_host_on(stream_id, self.address, _bytes_view(ary), where=_user_where())
                return ary
            _, _, view = self._stream_window(stream_id, _user_where())
            ary[...] = view.reshape(ary.shape) if ary.shape != self.shape else view
            return ary
        if native_stream(stream or self.stream) is not None:
            (stream or self.stream).synchronize()  # the host reads the bytes now: it waits for the stream
        _synchronize_device_of(self)
        same_order = (self.is_c_contiguous() and ary.flags.c_contiguous) or (
            self.is_f_contiguous() and ary.flags.f_contiguous and ary.shape == self.shape
        )
        if same_order:
            self._allocation.push()
            device().read_into(self.address, _bytes_view(ary))
        else:
            _, _, view = self._host_window()
            ary[...] = view.reshape(ary.shape) if ary.shape != self.shape else view
        return ary


_NOT_CONTIGUOUS = (
    "Array contains non-contiguous buffer and cannot be transferred as a single memory region. "
    "Please ensure contiguous buffer with numpy .ascontiguousarray()"
)


def _array_core(array):
    """The array without its broadcast (stride 0) axes, as numba-cuda compares it."""
    if not array.strides or not array.size:
        return array
    return array[tuple(0 if stride == 0 else slice(None) for stride in array.strides)]


def _check_array_compatibility(first, second) -> None:
    """numba-cuda's check before a copy, with its exceptions and words."""
    first_squeezed, second_squeezed = first.squeeze(), second.squeeze()
    if first.dtype != second.dtype:
        raise TypeError(f"incompatible dtype: {first.dtype} vs. {second.dtype}")
    if first_squeezed.shape != second_squeezed.shape:
        raise ValueError(f"incompatible shape: {first.shape} vs. {second.shape}")
    if first.size and first_squeezed.strides != second_squeezed.strides:
        raise ValueError(f"incompatible strides: {first.strides} vs. {second.strides}")


def _checked_copy_source(target: DeviceNDArray, source):
    """``source`` for ``target.copy_to_device(source)`` after numba-cuda's checks: a device
    array, or a host array in the target's layout. A float32 host array is not converted into
    a float64 device array: it is a ``TypeError``, as in Numba, at the copy's line."""
    target_core = _array_core(target._layout())
    if not (target_core.flags.c_contiguous or target_core.flags.f_contiguous):
        raise ValueError(_NOT_CONTIGUOUS)
    if isinstance(source, DeviceNDArray):
        source_core = _array_core(source._layout())
        if not (source_core.flags.c_contiguous or source_core.flags.f_contiguous):
            raise ValueError(_NOT_CONTIGUOUS)
        _check_array_compatibility(target_core, source_core)
        return source
    host = _array_core(np.asarray(source))
    host = np.array(host, order="C" if target_core.flags.c_contiguous else "F", copy=None)
    _check_array_compatibility(target_core, host)
    return host.reshape(target.shape)


@_user_facing
def to_device(obj, stream=0, copy: bool = True, to: Optional[DeviceNDArray] = None):
    """``cuda.to_device``: a device array holding a copy of ``obj``."""
    if isinstance(obj, DeviceNDArray):
        return obj
    host = np.asarray(obj)
    order = "F" if host.flags.f_contiguous and not host.flags.c_contiguous else "C"
    if to is None:
        to = DeviceNDArray(host.shape, host.dtype, order, uninit=not copy)
    if copy:
        to.copy_to_device(host, stream=stream)
    return to


def device_array(shape, dtype=np.float64, strides=None, order: str = "C", stream=0):
    """``cuda.device_array``: uninitialized, as on a GPU (initcheck reports reads of what nothing
    wrote)."""
    return DeviceNDArray(shape, dtype, order, uninit=True)


def device_array_like(ary, stream=0):
    if isinstance(ary, DeviceNDArray):
        order = "F" if ary.is_f_contiguous() and not ary.is_c_contiguous() else "C"
    else:
        order = "F" if ary.flags.f_contiguous and not ary.flags.c_contiguous else "C"
    return DeviceNDArray(ary.shape, ary.dtype, order, uninit=True)


def is_cuda_array(obj) -> bool:
    """Whether ``obj`` is device memory: a device array, or anything with the CUDA Array
    Interface (a ``racetrack.cupy`` array, a PyCUDA face ``GPUArray``)."""
    return isinstance(obj, DeviceNDArray) or hasattr(obj, "__cuda_array_interface__")


class _Borrowed:
    """Device memory another library's array owns (a CuPy array passed to a kernel): viewed,
    never freed, named in reports by its owner's label."""

    def __init__(self, address: int, owner):
        self.address = int(address)
        self.device_id = device().device_of(self.address)
        self.host = None
        self._owner = owner  # keeps the memory alive while the view is

    def push(self) -> None:
        pass

    def pull(self) -> None:
        pass


def as_cuda_array(obj, sync: bool = True) -> DeviceNDArray:
    """A device array viewing ``obj``'s memory, as Numba makes one from the CUDA Array Interface:
    a kernel's writes to it are in ``obj``."""
    if isinstance(obj, DeviceNDArray):
        return obj
    interface = getattr(obj, "__cuda_array_interface__", None)
    if interface is None:
        raise TypeError(f"{type(obj).__name__} does not implement the CUDA Array Interface")
    if interface.get("mask") is not None:
        raise NotImplementedError("masked CUDA arrays are not implemented in racetrack.cuda")
    dtype = np.dtype(interface["typestr"])
    shape = tuple(int(extent) for extent in interface["shape"])
    strides = interface.get("strides")
    strides = _contiguous_strides(shape, dtype.itemsize, "C") if strides is None else tuple(strides)
    view = object.__new__(DeviceNDArray)
    view.shape = shape
    view.dtype = dtype
    view.strides = tuple(int(s) for s in strides)
    view.label = getattr(getattr(obj, "_allocation", None), "label", "") or type(obj).__name__
    view._allocation = _Borrowed(int(interface["data"][0]), obj)
    view._offset = 0
    view.stream = 0
    return view


# -- memory the host and the device share ---------------------------------------------------


class MappedNDArray(np.ndarray):
    """``cuda.mapped_array``: a NumPy array in host memory the device sees too. Pass it to a
    kernel as it is; what the kernel writes is in it after the launch."""

    _racetrack_allocation: Optional[_Allocation] = None

    def __array_finalize__(self, obj) -> None:
        # A view of a mapped array is mapped too; a new array NumPy computed from one is not.
        allocation = getattr(obj, "_racetrack_allocation", None)
        if allocation is not None and _offset_in(self, allocation) is None:
            allocation = None
        self._racetrack_allocation = allocation


class ManagedNDArray(MappedNDArray):
    """``cuda.managed_array``: unified memory, which host and device both read and write."""


def _offset_in(array: np.ndarray, allocation: _Allocation) -> Optional[int]:
    """Where ``array``'s first element is in ``allocation``'s host buffer, if every element
    it covers is inside that buffer."""
    if allocation.host is None:
        return None
    base = allocation.host.__array_interface__["data"][0]
    start = array.__array_interface__["data"][0] - base
    low = sum(min(0, (n - 1) * s) for n, s in zip(array.shape, array.strides))
    high = sum(max(0, (n - 1) * s) for n, s in zip(array.shape, array.strides)) + array.itemsize
    if array.size and (start + low < 0 or start + high > allocation.host.size):
        return None
    return start


def mapped_device_view(array: np.ndarray) -> Optional[DeviceNDArray]:
    """The device side of a mapped or managed host array (or of a view of one); None for any
    other array."""
    allocation = getattr(array, "_racetrack_allocation", None)
    if allocation is None:
        return None
    offset = _offset_in(array, allocation)
    if offset is None:
        return None
    view = object.__new__(DeviceNDArray)
    view.shape = tuple(array.shape)
    view.dtype = array.dtype
    view.strides = tuple(array.strides)
    view.label = device_label(allocation)
    view._allocation = allocation
    view._offset = offset
    view.stream = 0
    return view


def device_label(allocation: _Allocation) -> str:
    return getattr(allocation, "label", "mapped_array")


def _shared_host_array(kind, shape, dtype, strides, order: str, label: str):
    if isinstance(shape, (int, np.integer)):
        shape = (int(shape),)
    dtype = np.dtype(dtype)
    shape = tuple(int(s) for s in shape)
    nbytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    if strides is not None:
        nbytes = (
            sum((n - 1) * s for n, s in zip(shape, strides)) + dtype.itemsize if all(shape) else 0
        )
    host = np.zeros(max(nbytes, 0), np.uint8)
    # The host buffer is initialized memory (np.empty's garbage is still the host's to read),
    # so initcheck has nothing to say about a kernel reading it.
    allocation = _Allocation(max(nbytes, 1), label, uninit=False, host=host)
    allocation.label = label
    array = np.ndarray(shape, dtype, buffer=host, strides=strides, order=order).view(kind)
    array._racetrack_allocation = allocation
    return array


def mapped_array(shape, dtype=np.float64, strides=None, order: str = "C", stream=0, portable=False, wc=False):
    """``cuda.mapped_array``: host memory the device reads and writes (zero-copy)."""
    return _shared_host_array(MappedNDArray, shape, dtype, strides, order, f"mapped_array_{next(_names)}")


def mapped_array_like(ary, stream=0, portable=False, wc=False):
    order = "F" if ary.flags.f_contiguous and not ary.flags.c_contiguous else "C"
    return mapped_array(ary.shape, ary.dtype, order=order)


def managed_array(shape, dtype=np.float64, strides=None, order: str = "C", stream=0, attach_global=True):
    """``cuda.managed_array``: unified memory, one array for host and device."""
    return _shared_host_array(ManagedNDArray, shape, dtype, strides, order, f"managed_array_{next(_names)}")


def mapped_device_array(host: np.ndarray, label: str) -> DeviceNDArray:
    """A device array over a host array's own bytes (``cuda.mapped(host)``)."""
    if not (host.flags.c_contiguous or host.flags.f_contiguous):
        raise ValueError("cuda.mapped needs contiguous host arrays (np.ascontiguousarray makes one)")
    if not host.flags.writeable:
        raise ValueError("cuda.mapped needs writeable host arrays: the device may write them")
    allocation = _Allocation(max(host.nbytes, 1), label, uninit=False, host=_bytes_view(host))
    allocation.label = label
    view = object.__new__(DeviceNDArray)
    view.shape = tuple(host.shape)
    view.dtype = host.dtype
    view.strides = tuple(host.strides)
    view.label = label
    view._allocation = allocation
    view._offset = 0
    view.stream = 0
    return view


def unmap(array: DeviceNDArray) -> None:
    """The end of ``cuda.mapped``: the host has the last of the device's writes, and the
    device array no longer reaches the host's memory."""
    array._allocation.pull()
    array._allocation.host = None
