"""``racetrack.pycuda.gpuarray``: PyCUDA's ``GPUArray`` in the emulator's memory:
``to_gpu``, ``empty``, ``zeros``, ``empty_like``, ``zeros_like``, ``arange``, ``.get()``,
``.gpudata`` (pass it, or the array itself, to a kernel), and the elementwise arithmetic a
tutorial checks results with (done on the host with NumPy; your kernels are what is checked)."""

from __future__ import annotations

import functools
import operator
import warnings

import numpy as np

from .. import _streams
from .._core import device
from .._device_array import DeviceArray, _binary
from .driver import DeviceAllocation
from .tools import VECTOR_TYPES


class _Borrowed:
    """Memory a ``GPUArray`` views but does not own (``GPUArray(..., gpudata=allocation)``)."""

    def __init__(self, address: int, owner):
        self.address = int(address)
        self._owner = owner

    def relabel(self, label: str) -> None:
        device().relabel(self.address, label)


def _contiguous_only(array: DeviceArray, message: str = "only contiguous arrays may be used as arguments to this operation") -> None:
    # PyCUDA's kernels behind these operations index the memory as one contiguous run, so it
    # refuses a strided view (x[::2]) with this RuntimeError; so does the face.
    if not array.flags.forc:
        raise RuntimeError(message)


def _reducible(array: DeviceArray) -> None:
    _contiguous_only(array, "ReductionKernel cannot deal with non-contiguous arrays")


def _pycuda_binary(method, comparison: bool = False, division: bool = False):
    """One of ``DeviceArray``'s operators with PyCUDA's rules around it: contiguous arrays
    only, no broadcasting but of a 0-d array, ``/`` of integers left out (PyCUDA computes it in
    the integer type, with its own rounding), comparisons giving 1 and 0 in the operands' type."""

    def operator_method(self, other):
        _contiguous_only(self)
        if isinstance(other, GPUArray):
            _contiguous_only(other)
            if self.shape != other.shape and () not in (self.shape, other.shape):
                raise NotImplementedError(f"Broadcasting binary operator with shapes: {self.shape}, {other.shape}.")
        if division:
            other_kind = other.dtype.kind if isinstance(other, (GPUArray, np.generic)) else np.asarray(other).dtype.kind
            if self.dtype.kind in "iub" and other_kind in "iub":
                raise NotImplementedError(
                    "/ of integer GPUArrays is not implemented in racetrack's PyCUDA face "
                    "(PyCUDA computes it in the integer type); use .astype(np.float32) first"
                )
        result = method(self, other)
        if comparison and result is not NotImplemented:
            common = np.result_type(self.dtype, other.dtype) if isinstance(other, GPUArray) else self.dtype
            return result.astype(common)
        return result

    return operator_method


class GPUArray(DeviceArray):
    """An array in the emulator's memory, as PyCUDA's ``GPUArray``: ``a[i]``, ``a[1:3]``,
    ``a[-1]``, ``a[..., None]`` are views (a 0-d array for one element), and ``a[1:3] = b``
    writes through to ``a``."""

    @staticmethod
    def _out_of_memory(why: str) -> Exception:
        from .driver import MemoryError as DriverMemoryError

        return DriverMemoryError(f"cuMemAlloc failed: out of memory ({why})")

    _library = "pycuda.gpuarray"

    def __init__(self, shape, dtype, allocator=None, base=None, gpudata=None, strides=None, order: str = "C"):
        if order != "C":
            raise NotImplementedError("racetrack's GPUArray is C-contiguous; order='F' is not supported")
        if gpudata is None and allocator is not None:
            # The program's allocator (a DeviceMemoryPool's allocate, say) provides the memory,
            # as PyCUDA calls it: it is kept alive with the array.
            size = int(np.prod(shape if not isinstance(shape, (int, np.integer)) else (shape,)))
            gpudata = allocator(size * np.dtype(dtype).itemsize or 1)
        borrowed = None if gpudata is None else _Borrowed(int(gpudata), gpudata)
        super().__init__(shape, dtype, allocation=borrowed)
        if strides is not None:
            self.strides = tuple(int(s) for s in strides)
        self.base = base

    @property
    def gpudata(self) -> DeviceAllocation:
        """The array's memory, as a kernel argument or for ``memcpy_*``."""
        return DeviceAllocation(self.nbytes, address=self.ptr, owner=self)

    @property
    def mem_size(self) -> int:
        return self.size

    @property
    def _grid(self) -> tuple:
        """PyCUDA's launch shape for one thread per element (``splay``), which its examples
        pass to their own kernels as ``x._grid, x._block``."""
        return splay(self.size)[0]

    @property
    def _block(self) -> tuple:
        return splay(self.size)[1]

    def set(self, ary, async_: bool = False, stream=None) -> None:
        """Copies the NumPy array ``ary`` in, with PyCUDA's checks: the same size (a different
        shape is reshaped, with PyCUDA's warning) and the same dtype; with ``async_=True`` and a
        stream, copied on it (``memcpy_htod_async``)."""
        if ary.size != self.size:
            raise ValueError("ary and self must be the same size")
        if ary.shape != self.shape:
            warnings.warn("Setting array from one with different shape.", stacklevel=2)
            ary = ary.reshape(self.shape)
        if ary.dtype != self.dtype:
            raise ValueError("ary and self must have the same dtype")
        self._write_host(ary, _streams.native(stream) if async_ else None)

    def set_async(self, ary, stream=None) -> None:
        self.set(ary, async_=True, stream=stream)

    def get(self, ary=None, pagelocked: bool = False, async_: bool = False, stream=None) -> np.ndarray:
        """The contents as a NumPy array (into ``ary`` when given: same size and dtype); with
        ``async_=True`` and a stream, copied on it (``memcpy_dtoh_async``)."""
        stream_id = _streams.native(stream) if async_ else None
        if ary is None:
            return self._read_host(stream_id)
        if self.size != ary.size:
            raise ValueError("self and ary must be the same size")
        if self.dtype != ary.dtype:
            raise TypeError("self and ary must have the same dtype")
        ary.reshape(-1)[...] = self._read_host(stream_id).reshape(-1)
        return ary

    def get_async(self, stream=None, ary=None) -> np.ndarray:
        return self.get(ary=ary, async_=True, stream=stream)

    def _assign(self, value) -> None:
        """``a[index] = value`` as PyCUDA does it: a scalar fills; an array (GPUArray or NumPy)
        must have the view's shape and dtype (PyCUDA does not broadcast or convert here)."""
        if np.isscalar(value):
            self.fill(value)
            return
        if not isinstance(value, (GPUArray, np.ndarray)):
            raise TypeError("src must be GPUArray or ndarray")
        if value.shape != self.shape:
            raise ValueError("src and dst must be same shape")
        if value.dtype != self.dtype:
            raise TypeError("src and dst must have same dtype")
        self._write_host(value.get() if isinstance(value, GPUArray) else value)

    def fill(self, value, stream=None) -> "GPUArray":
        _contiguous_only(self)
        return super().fill(value)

    def __neg__(self) -> "GPUArray":
        _contiguous_only(self)
        return super().__neg__()

    def __abs__(self) -> "GPUArray":
        if not self.flags.forc:
            # PyCUDA's abs() runs over `size` elements from the view's first one, contiguously:
            # on a GPU it answers for the wrong elements, silently. Racetrack says so instead.
            raise RuntimeError(
                "Racetrack found: abs() of a non-contiguous GPUArray; PyCUDA computes it over "
                "the contiguous memory from the view's first element, not the view's elements. "
                "Take abs() of a contiguous copy (x.copy())"
            )
        return super().__abs__()

    def astype(self, dtype, stream=None) -> "GPUArray":
        _contiguous_only(self)
        return super().astype(dtype)

    def reshape(self, *shape, order: str = "C") -> "GPUArray":
        _contiguous_only(self)
        return super().reshape(*shape, order=order)

    def ravel(self) -> "GPUArray":
        return self.reshape(self.size)

    def __hash__(self):
        raise TypeError("GPUArrays are not hashable.")

    def __bool__(self) -> bool:
        if self.size == 1:
            return bool(self.get())
        raise ValueError(
            "The truth value of an array with more than one element is ambiguous. Use a.any() or a.all()"
        )

    def __getattr__(self, name: str):
        # Only reached for what the class does not define (PyCUDA's has no .sum(): use
        # gpuarray.sum(a)).
        if name.startswith("_") or name in _NOT_IN_PYCUDA:
            raise AttributeError(f"'GPUArray' object has no attribute '{name}'")
        raise NotImplementedError(f"GPUArray.{name} is not implemented in racetrack's PyCUDA face")

    def __repr__(self) -> str:
        return repr(self.get())

    def __str__(self) -> str:
        return str(self.get())


# What PyCUDA's GPUArray does not have either, though NumPy's arrays do.
_NOT_IN_PYCUDA = {"sum", "max", "min", "mean", "argmax", "argmin", "prod", "cumsum"}
for _name in _NOT_IN_PYCUDA & set(vars(DeviceArray)):
    setattr(GPUArray, _name, property(lambda self, _n=_name: self.__getattr__(_n)))

for _name in (
    "__add__", "__radd__", "__sub__", "__rsub__", "__mul__", "__rmul__", "__truediv__",
    "__rtruediv__", "__pow__", "__rpow__", "__iadd__", "__isub__", "__imul__", "__itruediv__",
):
    setattr(GPUArray, _name, _pycuda_binary(getattr(DeviceArray, _name), division="truediv" in _name))
for _name, _op in (
    ("__eq__", operator.eq), ("__ne__", operator.ne), ("__lt__", operator.lt),
    ("__le__", operator.le), ("__gt__", operator.gt), ("__ge__", operator.ge),
):
    _method = _binary(_op)
    _method.__name__ = _name
    setattr(GPUArray, _name, _pycuda_binary(_method, comparison=True))


class _VectorTypes:
    """``gpuarray.vec``: CUDA's vector types as NumPy dtypes (``vec.float3``, a record of fields
    ``x``, ``y``, ``z``), with ``make_float3(x, y, z)``, ``zero_float3()`` and
    ``filled_float3(v)``, as PyCUDA's."""

    def __init__(self):
        for name, dtype in VECTOR_TYPES.items():
            setattr(self, name, dtype)
            setattr(self, f"make_{name}", functools.partial(self._make, dtype))
            setattr(self, f"zero_{name}", functools.partial(self._make, dtype, *([0] * len(dtype.names))))
            setattr(self, f"filled_{name}", functools.partial(self._filled, dtype))

    @staticmethod
    def _make(dtype: np.dtype, *values) -> np.ndarray:
        if len(values) != len(dtype.names):
            raise TypeError(f"{len(dtype.names)} values make a vector of this type, not {len(values)}")
        return np.array(tuple(values), dtype=dtype)

    @staticmethod
    def _filled(dtype: np.dtype, value) -> np.ndarray:
        return np.array((value,) * len(dtype.names), dtype=dtype)


vec = _VectorTypes()


def to_gpu(ary, allocator=None) -> GPUArray:
    """A ``GPUArray`` holding a copy of the NumPy array ``ary``."""
    host = np.asarray(ary)
    made = GPUArray(host.shape, host.dtype, allocator=allocator)
    made.set(host)
    return made


def to_gpu_async(ary, allocator=None, stream=None) -> GPUArray:
    """``to_gpu`` with the copy queued on ``stream``."""
    host = np.asarray(ary)
    made = GPUArray(host.shape, host.dtype, allocator=allocator)
    made.set_async(host, stream=stream)
    return made


def empty(shape, dtype=np.float64, allocator=None, order: str = "C") -> GPUArray:
    """Uninitialized, as ``cudaMalloc`` gives (initcheck reports reads of what nothing wrote)."""
    return GPUArray(shape, dtype, allocator=allocator, order=order)


def zeros(shape, dtype=np.float64, allocator=None, order: str = "C") -> GPUArray:
    return empty(shape, dtype, allocator=allocator, order=order).fill(0)


def ones(shape, dtype=np.float64, allocator=None, order: str = "C") -> GPUArray:
    return empty(shape, dtype, allocator=allocator, order=order).fill(1)


def empty_like(other, dtype=None, order: str = "C") -> GPUArray:
    return empty(other.shape, dtype or other.dtype)


def zeros_like(other, dtype=None, order: str = "C") -> GPUArray:
    return zeros(other.shape, dtype or other.dtype)


def ones_like(other, dtype=None, order: str = "C") -> GPUArray:
    return ones(other.shape, dtype or other.dtype)


def arange(*args, dtype=None) -> GPUArray:
    return to_gpu(np.arange(*args, dtype=dtype))


def sum(a: GPUArray, dtype=None, stream=None, allocator=None) -> GPUArray:  # noqa: A001 (PyCUDA's name)
    """A 0-d array: the sum in ``dtype``, which is ``a``'s own when not given (PyCUDA's rule,
    not NumPy's, which sums int32 in int64)."""
    _reducible(a)
    dtype = np.dtype(dtype) if dtype is not None else a.dtype
    return to_gpu(np.asarray(np.sum(a.get(), dtype=dtype), dtype=dtype))


def dot(a: GPUArray, b: GPUArray, dtype=None, stream=None, allocator=None) -> GPUArray:
    _reducible(a)
    _reducible(b)
    dtype = np.dtype(dtype) if dtype is not None else np.result_type(a.dtype, b.dtype)
    products = a.get().ravel().astype(dtype) * b.get().ravel().astype(dtype)
    return to_gpu(np.asarray(np.sum(products, dtype=dtype), dtype=dtype))


def max(a: GPUArray, stream=None) -> GPUArray:  # noqa: A001 (PyCUDA's name)
    _reducible(a)
    return to_gpu(np.asarray(np.max(a.get())))


def min(a: GPUArray, stream=None) -> GPUArray:  # noqa: A001 (PyCUDA's name)
    _reducible(a)
    return to_gpu(np.asarray(np.min(a.get())))


def splay(n: int, dev=None):
    """PyCUDA's ``gpuarray.splay``: ``(grid, block)`` covering ``n`` elements, one warp per block
    for small ``n`` and at most 128 threads in each of 4 × 8 blocks per multiprocessor."""
    warp, max_threads = 32, 128
    from .driver import Device, device_attribute

    max_blocks = 4 * 8 * Device(0).get_attribute(device_attribute.MULTIPROCESSOR_COUNT)
    if n < warp:
        blocks, threads = 1, warp
    elif n < max_blocks * warp:
        blocks, threads = (n + warp - 1) // warp, warp
    elif n < max_blocks * max_threads:
        warps = (n + warp - 1) // warp
        blocks, threads = max_blocks, ((warps + max_blocks - 1) // max_blocks) * warp
    else:
        blocks, threads = max_blocks, max_threads
    return (blocks, 1), (threads, 1, 1)


def __getattr__(name: str):
    if name.startswith("__"):
        raise AttributeError(name)
    raise NotImplementedError(f"pycuda.gpuarray.{name} is not implemented in racetrack's PyCUDA face")
