"""``from racetrack import cupy as cp``: a stand-in for CuPy's raw kernels that runs them on
Racetrack's PTX emulator, with its checkers, on a machine without a GPU.

``RawKernel(code, name)((grid,), (block,), (args,), shared_mem=…)`` and
``RawModule(code=…).get_function(name)`` compile with NVRTC as CuPy does (no ``extern "C"``
is added: write it, as CuPy's examples do), and the array helpers a tutorial uses with them
(``asarray``, ``asnumpy``, ``zeros``, ``empty``, ``ones``, ``arange``, ``*_like``) keep arrays in
the emulator's memory. A launch a checker objects to raises ``racetrack.RaceError``,
``SyncError`` or ``MemoryAccessError`` naming the kernel's line in your ``.py`` file. Moving to
a real GPU is the import line alone: ``import cupy as cp``.

Arguments are passed as CuPy passes them: an ``ndarray`` as a pointer to its data; NumPy
scalars (and one-element NumPy arrays) by value with their own dtype; a Python ``int`` as a
``long long``, ``float`` as a ``double``, ``bool`` as a ``bool``, ``complex`` as a
``complex<double>``. CuPy checks none of this, and a GPU reads the first bytes the parameter's
type needs; where those bytes are not the value (a Python ``float`` for a ``float``
parameter), a GPU computes with garbage, so racetrack raises ``TypeError`` instead.
"""

from __future__ import annotations

import operator
from typing import Optional, Sequence

import numpy as np

from .. import _core, _cuda_c, _streams
from .._device_array import DeviceArray, _binary
from . import _compiler, cuda, random  # noqa: F401 (cupy.cuda, cupy.random)
from ._kernels import ElementwiseKernel, ReductionKernel  # noqa: F401 (the face)

# The dtypes, as CuPy re-exports NumPy's.
bool_ = np.bool_
int8, int16, int32, int64 = np.int8, np.int16, np.int32, np.int64
uint8, uint16, uint32, uint64 = np.uint8, np.uint16, np.uint32, np.uint64
float16, float32, float64 = np.float16, np.float32, np.float64
complex64, complex128 = np.complex64, np.complex128
dtype = np.dtype


class MemoryPointer:
    """``ndarray.data``: the array's memory; ``.ptr`` is its device address."""

    def __init__(self, ptr: int, owner):
        self.ptr = int(ptr)
        self._owner = owner

    def __int__(self) -> int:
        return self.ptr

    def __add__(self, offset: int) -> "MemoryPointer":
        return MemoryPointer(self.ptr + int(offset), self._owner)

    def copy_from_host(self, host, size: int) -> None:
        data = np.ascontiguousarray(host).reshape(-1).view(np.uint8)[: int(size)]
        if data.size:
            _core.device().write(self.ptr, data)

    def copy_to_host(self, host, size: int) -> None:
        view = host.reshape(-1).view(np.uint8)[: int(size)]
        if view.size:
            _core.device().read_into(self.ptr, view)

    def memset(self, value: int, size: int) -> None:
        if int(size):
            _core.device().write(self.ptr, np.full(int(size), value, np.uint8))


def _reduction(name: str):
    """An ndarray reduction (``a.sum(axis=0)``), computed by NumPy on the array's contents;
    the result is a new device array (0-d for a full reduction), or ``out``."""

    def method(self, *args, out: Optional["ndarray"] = None, **kwargs):
        result = np.asarray(getattr(self.get(), name)(*args, **kwargs))
        if out is None:
            return self._like_host(result)
        out._assign(result)
        return out

    method.__name__ = name
    return method


class ndarray(DeviceArray):  # noqa: N801 (CuPy's name)
    """An array in the emulator's memory, as CuPy's ``ndarray``: indexing and slicing give
    views (a write through one reaches the base), integer-array and mask indexing give copies,
    operators broadcast as NumPy's do."""

    @staticmethod
    def _out_of_memory(why: str) -> Exception:
        from .cuda import OutOfMemoryError

        return OutOfMemoryError(f"Out of memory allocating on the device: {why}")

    _library = "cupy"
    _fancy_indexing = True

    def __init__(
        self, shape, dtype=float, memptr: Optional[MemoryPointer] = None, strides=None, order: str = "C"
    ):
        if order != "C":
            raise NotImplementedError("racetrack's cupy.ndarray is C-contiguous; order='F' is not supported")
        if memptr is not None:
            raise NotImplementedError("racetrack's cupy.ndarray owns its memory; memptr= is not supported")
        super().__init__(shape, dtype)

    def __getattr__(self, name: str):
        # Only reached for what the class does not define: say so, rather than AttributeError,
        # which reads as a typo in the user's code.
        if name.startswith("_"):
            raise AttributeError(name)
        raise NotImplementedError(f"cupy.ndarray.{name} is not implemented in racetrack's CuPy face")

    @property
    def data(self) -> MemoryPointer:
        return MemoryPointer(self.ptr, self)

    @property
    def device(self):
        return cuda.Device(0)

    def get(self, stream=None, order: str = "C", out: Optional[np.ndarray] = None, blocking: bool = True) -> np.ndarray:
        """The contents as a NumPy array (into ``out`` when given: same shape and dtype), copied
        on ``stream`` when given, else synchronously."""
        if out is None:
            return super().get(stream=stream)
        if not isinstance(out, np.ndarray):
            raise TypeError("Only numpy.ndarray can be obtained from cupy.ndarray")
        if out.dtype != self.dtype:
            raise TypeError(f"{self.dtype} array cannot be obtained from {out.dtype} array")
        if out.shape != self.shape:
            raise ValueError(f"Shape mismatch. Old shape: {out.shape}, new shape: {self.shape}")
        out[...] = super().get(stream=stream)
        return out

    def set(self, arr, stream=None) -> None:
        """Copies the NumPy array ``arr`` (same dtype and shape, as CuPy asks) into this one: on
        ``stream`` when given, else synchronously."""
        if not isinstance(arr, np.ndarray):
            raise TypeError("Only numpy.ndarray can be set to cupy.ndarray")
        if arr.dtype != self.dtype:
            raise TypeError(f"{arr.dtype} array cannot be set to {self.dtype} array")
        if arr.shape != self.shape:
            raise ValueError(f"Shape mismatch. Old shape: {self.shape}, new shape: {arr.shape}")
        self._write_host(arr, _streams.native(stream))

    def fill(self, value) -> None:
        super().fill(value)

    def __array__(self, dtype=None, copy=None):
        # CuPy refuses to be converted implicitly (np.asarray(a), np.sum(a)): the copy from the
        # device must be asked for. So does the face, with CuPy's message.
        raise TypeError(
            "Implicit conversion to a NumPy array is not allowed. "
            "Please use `.get()` to construct a NumPy array explicitly."
        )

    def __repr__(self) -> str:
        return repr(self.get())

    def __str__(self) -> str:
        return str(self.get())

    __hash__ = None  # as NumPy's and CuPy's arrays: == is element-wise
    __eq__ = _binary(operator.eq)
    __ne__ = _binary(operator.ne)
    __lt__ = _binary(operator.lt)
    __le__ = _binary(operator.le)
    __gt__ = _binary(operator.gt)
    __ge__ = _binary(operator.ge)
    __matmul__ = _binary(operator.matmul)
    __rmatmul__ = _binary(operator.matmul, reflected=True)
    __lshift__ = _binary(operator.lshift)
    __rshift__ = _binary(operator.rshift)

    def __invert__(self):
        return self._like_host(~self.get())

    sum = _reduction("sum")
    prod = _reduction("prod")
    max = _reduction("max")
    min = _reduction("min")
    argmax = _reduction("argmax")
    argmin = _reduction("argmin")
    mean = _reduction("mean")
    var = _reduction("var")
    std = _reduction("std")
    any = _reduction("any")
    all = _reduction("all")
    cumsum = _reduction("cumsum")

    def dot(self, b, out=None):
        return dot(self, b, out=out)

    def swapaxes(self, axis1: int, axis2: int) -> "ndarray":
        moved = self._layout().swapaxes(axis1, axis2)
        return self._view(moved.shape, moved.strides)

    def view(self, dtype=None) -> "ndarray":
        """The same bytes read as another dtype of the same size."""
        if dtype is None:
            return self._view(self.shape, self.strides)
        dtype = np.dtype(dtype)
        if dtype.itemsize != self.dtype.itemsize:
            raise NotImplementedError("view() with another item size is not implemented in racetrack's CuPy face")
        return self._view(self.shape, self.strides, dtype=dtype)


def _on_host(value):
    """A CuPy function's argument as NumPy computes with it; CuPy refuses host arrays."""
    if isinstance(value, DeviceArray):
        return value.get()
    if isinstance(value, np.ndarray) and value.ndim > 0:
        raise TypeError(f"Unsupported type {type(value)}")
    if isinstance(value, (list, tuple)):
        return type(value)(_on_host(part) for part in value)
    return value


def _elementwise(function):
    """A CuPy function over device arrays (``cp.sqrt``, ``cp.maximum``, ``cp.where``, ``cp.sum``),
    computed by NumPy's function of the same name on the arrays' contents; the result is a new
    device array, or ``out``."""

    def wrapper(*args, out: Optional[ndarray] = None, **kwargs):
        result = function(*(_on_host(a) for a in args), **{k: _on_host(v) for k, v in kwargs.items()})
        if isinstance(result, tuple):
            return tuple(asarray(part) for part in result)
        if out is None:
            return asarray(np.asarray(result))
        out._assign(result)
        return out

    wrapper.__name__ = function.__name__
    wrapper.__doc__ = f"CuPy's {function.__name__}, computed by NumPy on the arrays' contents."
    return wrapper


for _name in (
    # element-wise
    "add", "subtract", "multiply", "divide", "true_divide", "floor_divide", "power", "mod",
    "remainder", "negative", "absolute", "abs", "sqrt", "square", "exp", "log", "log2", "log10",
    "sin", "cos", "tan", "tanh", "arctan2", "floor", "ceil", "rint", "sign", "maximum",
    "minimum", "fmax", "fmin", "clip", "where", "isnan", "isinf", "isfinite", "logical_and",
    "logical_or", "logical_not", "equal", "not_equal", "less", "less_equal", "greater",
    "greater_equal",
    # reductions
    "sum", "prod", "max", "min", "amax", "amin", "argmax", "argmin", "mean", "var", "std",
    "any", "all", "cumsum", "count_nonzero", "nonzero",
    # linear algebra and assembly (copies)
    "dot", "matmul", "inner", "outer", "concatenate", "stack", "vstack", "hstack", "sort",
    "argsort", "flip", "unique", "bincount", "histogram", "diff",
):
    globals()[_name] = _elementwise(getattr(np, _name))


def reshape(a: ndarray, newshape, order: str = "C") -> ndarray:
    return a.reshape(newshape, order=order)


def ravel(a: ndarray, order: str = "C") -> ndarray:
    return a.ravel(order)


def transpose(a: ndarray, axes=None) -> ndarray:
    return a.transpose(axes) if axes is not None else a.transpose()


def squeeze(a: ndarray, axis=None) -> ndarray:
    return a.squeeze(axis)


def asarray(a, dtype=None, order=None) -> ndarray:
    """``a`` in the emulator's memory (``a`` itself when it already is there with that dtype)."""
    if isinstance(a, ndarray) and (dtype is None or np.dtype(dtype) == a.dtype):
        return a
    if not isinstance(a, DeviceArray) and hasattr(a, "__cuda_array_interface__"):
        # Another library's device array (Numba's): viewed, not copied, as CuPy does.
        view = ndarray.over_interface(a)
        return view if dtype is None or np.dtype(dtype) == view.dtype else view.astype(dtype)
    host = a.get() if isinstance(a, DeviceArray) else a
    host = np.asarray(host, dtype=dtype)
    made = ndarray(host.shape, host.dtype)
    made._write_host(host)
    return made


def array(obj, dtype=None, copy: bool = True, order=None) -> ndarray:
    if isinstance(obj, ndarray) and not copy and (dtype is None or np.dtype(dtype) == obj.dtype):
        return obj
    host = obj.get() if isinstance(obj, DeviceArray) else obj
    host = np.array(host, dtype=dtype)
    made = ndarray(host.shape, host.dtype)
    made._write_host(host)
    return made


def asnumpy(a, stream=None, order: str = "C", out: Optional[np.ndarray] = None) -> np.ndarray:
    """``a`` as a NumPy array (copied from the emulator's memory when it is there)."""
    if isinstance(a, DeviceArray):
        return a.get(stream=stream, out=out)
    result = np.asarray(a)
    if out is not None:
        out[...] = result
        return out
    return result


def empty(shape, dtype=float, order: str = "C") -> ndarray:
    """Uninitialized, as on a GPU (initcheck reports reads of what nothing wrote)."""
    return ndarray(shape, dtype, order=order)


def zeros(shape, dtype=float, order: str = "C") -> ndarray:
    made = empty(shape, dtype, order)
    made.fill(0)
    return made


def ones(shape, dtype=float, order: str = "C") -> ndarray:
    made = empty(shape, dtype, order)
    made.fill(1)
    return made


def full(shape, fill_value, dtype=None, order: str = "C") -> ndarray:
    made = empty(shape, dtype if dtype is not None else np.asarray(fill_value).dtype, order)
    made.fill(fill_value)
    return made


def empty_like(a, dtype=None, order: str = "C", shape=None) -> ndarray:
    return empty(shape if shape is not None else a.shape, dtype or a.dtype)


def zeros_like(a, dtype=None, order: str = "C", shape=None) -> ndarray:
    return zeros(shape if shape is not None else a.shape, dtype or a.dtype)


def ones_like(a, dtype=None, order: str = "C", shape=None) -> ndarray:
    return ones(shape if shape is not None else a.shape, dtype or a.dtype)


def full_like(a, fill_value, dtype=None, order: str = "C", shape=None) -> ndarray:
    return full(shape if shape is not None else a.shape, fill_value, dtype or a.dtype)


def arange(start, stop=None, step=1, dtype=None) -> ndarray:
    host = np.arange(start, stop, step, dtype=dtype) if stop is not None else np.arange(start, dtype=dtype)
    return asarray(host)


def linspace(start, stop, num: int = 50, endpoint: bool = True, retstep: bool = False, dtype=None, axis: int = 0):
    host = np.linspace(start, stop, num, endpoint=endpoint, retstep=retstep, dtype=dtype, axis=axis)
    if retstep:
        return asarray(host[0]), host[1]
    return asarray(host)


def allclose(a, b, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False) -> bool:
    return bool(np.allclose(asnumpy(a), asnumpy(b), rtol=rtol, atol=atol, equal_nan=equal_nan))


def array_equal(a, b) -> bool:
    return bool(np.array_equal(asnumpy(a), asnumpy(b)))


def get_array_module(*args):
    """CuPy's helper for code that runs on both: this module when any argument is on the
    device, else NumPy."""
    import sys

    on_device = [isinstance(a, DeviceArray) for a in args]
    return sys.modules[__name__] if True in on_device else np


# -- raw kernels -----------------------------------------------------------------------------


def _argument(value, param: "_cuda_c.Param", index: int, kernel: str):
    what = param.describe(index, kernel)
    if isinstance(value, DeviceArray):
        return _cuda_c.pointer(
            value.ptr, param, what, allocation_start=value.starts_allocation, dtype=value.dtype, contents=value.get
        )
    if isinstance(value, MemoryPointer):
        return _cuda_c.pointer(value.ptr, param, what)
    if isinstance(value, np.generic):
        return _cuda_c.by_value(np.asarray(value), param, what)
    if isinstance(value, np.ndarray):
        if value.size == 1 or (param.array and value.nbytes >= param.size):
            return _cuda_c.by_value(value, param, what)
        raise TypeError(
            f"{what}: a NumPy array of {value.size} elements is host memory, which a kernel "
            "cannot read; pass cupy.asarray(a)"
        )
    # CuPy's rule for Python scalars: int → long long, float → double, bool → bool.
    if isinstance(value, bool):
        return _cuda_c.by_value(np.asarray(value, dtype=np.bool_), param, what)
    if isinstance(value, int):
        if not -(1 << 63) <= value < (1 << 63):
            raise OverflowError(f"{what}: the Python int {value} does not fit in a long long")
        return _cuda_c.by_value(np.asarray(value, dtype=np.int64), param, what)
    if isinstance(value, float):
        return _cuda_c.by_value(np.asarray(value, dtype=np.float64), param, what)
    if isinstance(value, complex):
        return _cuda_c.by_value(np.asarray(value, dtype=np.complex128), param, what)
    interface = getattr(value, "__cuda_array_interface__", None)
    if interface is not None:
        return _cuda_c.pointer(int(interface["data"][0]), param, what)
    raise TypeError(f"Unsupported type {type(value)} for {what}")


class RawKernel:
    """A kernel from CUDA C source, as CuPy's ``RawKernel``: compiled at its first call (or
    ``compile()``); ``kernel((grid,), (block,), (args,), shared_mem=bytes)`` launches it."""

    max_threads_per_block = 1024

    def __init__(
        self,
        code: str,
        name: str,
        options: Sequence[str] = (),
        backend: str = "nvrtc",
        translate_cucomplex: bool = False,
        *,
        enable_cooperative_groups: bool = False,
        jitify: bool = False,
        _program: Optional["_cuda_c.Program"] = None,
    ):
        self.code = code
        self.name = name
        self.options = tuple(options)
        if _program is None:
            text, source_name = _cuda_c.mapped_source(code, "kernel.cu")
            _program = _cuda_c.Program(
                text, source_name, _cuda_c.parse_options(self.options), _compiler.compile_error
            )
        self._program = _program
        self._kernel: Optional[_cuda_c.Kernel] = None

    def __repr__(self) -> str:
        return f"<racetrack cupy.RawKernel {self.name}>"

    def compile(self, log_stream=None) -> None:
        if self._kernel is None:
            self._kernel = self._program.kernel(self.name)

    @property
    def attributes(self) -> dict:
        return {"max_threads_per_block": self.max_threads_per_block}

    @_cuda_c.user_facing
    def __call__(
        self, grid, block, args, *, shared_mem: int = 0, stream=None, enable_cooperative_groups: bool = False
    ):
        for name, shape in (("grid", grid), ("block", block)):
            if not isinstance(shape, tuple):
                # CuPy's Cython signature types both as tuples: (blocks,), not blocks.
                raise TypeError(
                    f"Argument '{name}' has incorrect type (expected tuple, got {type(shape).__name__})"
                )
        self.compile()
        kernel = self._kernel
        if not isinstance(args, (tuple, list)):
            raise TypeError(f"the kernel's arguments are a tuple, (x, y, n), not {type(args).__name__}")
        _cuda_c.check_arity(kernel, len(args))
        marshalled = [
            _argument(value, param, index, kernel.name)
            for index, (value, param) in enumerate(zip(args, kernel.params))
        ]
        _cuda_c.launch(
            kernel,
            _core.dim3(grid, "grid"),
            _core.dim3(block, "block"),
            marshalled,
            shared_bytes=int(shared_mem),
            where_text=_cuda_c.where(),
            stream=(stream or cuda.get_current_stream())._racetrack_stream,
        )


class RawModule:
    """A CUDA C source with several kernels, as CuPy's ``RawModule(code=…)``;
    ``get_function(name)`` returns a ``RawKernel``. Kernels share the module's ``__constant__``
    and ``__device__`` variables (``get_global``). ``name_expressions`` lists template kernels
    by the names ``get_function`` will be given (``"fx3<float>"``)."""

    @_cuda_c.user_facing
    def __init__(
        self,
        *,
        code: Optional[str] = None,
        path: Optional[str] = None,
        options: Sequence[str] = (),
        backend: str = "nvrtc",
        translate_cucomplex: bool = False,
        enable_cooperative_groups: bool = False,
        name_expressions: Optional[Sequence[str]] = None,
        jitify: bool = False,
    ):
        if (code is None) == (path is None):
            raise TypeError("RawModule takes one of code= (CUDA C source) or path= (a .cu file)")
        if path is not None:
            if not str(path).endswith(".cu"):
                raise ValueError(f"racetrack's RawModule loads CUDA C source (.cu), not the binary {path}")
            with open(path, encoding="utf-8") as file:
                code = file.read()
            self._program = _cuda_c.Program(
                code, _core.relative_path(str(path)), _cuda_c.parse_options(options), _compiler.compile_error
            )
        else:
            text, source_name = _cuda_c.mapped_source(code, "kernel.cu")
            self._program = _cuda_c.Program(
                text, source_name, _cuda_c.parse_options(options), _compiler.compile_error
            )
        self.code = code
        self.options = tuple(options)
        self.name_expressions = tuple(name_expressions or ())
        self._functions = {}

    @_cuda_c.user_facing
    def get_function(self, name: str) -> RawKernel:
        found = self._functions.get(name)
        if found is None:
            found = RawKernel(self.code, name, self.options, _program=self._program)
            found.compile()
            self._functions[name] = found
        return found

    def compile(self, log_stream=None) -> None:
        self._program.compile_eagerly()

    def get_global(self, name: str) -> MemoryPointer:
        """A ``__constant__`` or ``__device__`` variable's memory."""
        if self._program.module() is None:
            self._program.compile_eagerly()
        module = self._program.module()
        found = _core.device().symbol(module, name) if module is not None else None
        if found is None:
            raise cuda.driver.CUDADriverError(f"CUDA_ERROR_NOT_FOUND: named symbol not found: {name}")
        return MemoryPointer(found[0], self)


def __getattr__(name: str):
    # Only reached for what the module does not define: a CuPy call this face lacks says so.
    if name.startswith("__"):
        raise AttributeError(name)
    raise NotImplementedError(f"cupy.{name} is not implemented in racetrack's CuPy face")
