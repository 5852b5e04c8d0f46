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

from typing import Optional, Sequence

import numpy as np

from .. import _core, _cuda_c
from .._device_array import DeviceArray
from . import cuda, random  # noqa: F401 (cupy.cuda, cupy.random)

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


class ndarray(DeviceArray):  # noqa: N801 (CuPy's name)
    """A C-contiguous array in the emulator's memory, as CuPy's ``ndarray``."""

    def __init__(
        self, shape, dtype=float, memptr: Optional[MemoryPointer] = None, strides=None, order: str = "C"
    ):
        if order != "C":
            raise NotImplementedError("racetrack's cupy.ndarray is C-contiguous; order='F' is not supported")
        if memptr is not None:
            raise NotImplementedError("racetrack's cupy.ndarray owns its memory; memptr= is not supported")
        super().__init__(shape, dtype)

    @property
    def data(self) -> MemoryPointer:
        return MemoryPointer(self.ptr, self)

    def get(self, stream=None, order: str = "C", out: Optional[np.ndarray] = None) -> np.ndarray:
        """The contents as a NumPy array: copied on ``stream`` when given, else synchronously."""
        return super().get(out, stream=stream)

    def set(self, arr, stream=None) -> None:
        """Copies ``arr`` in: on ``stream`` when given, else synchronously."""
        super().set(arr, stream=stream)

    def __repr__(self) -> str:
        return repr(self.get())

    def __str__(self) -> str:
        return str(self.get())


def asarray(a, dtype=None, order=None) -> ndarray:
    """``a`` in the emulator's memory (``a`` itself when it already is there with that dtype)."""
    if isinstance(a, ndarray) and (dtype is None or np.dtype(dtype) == a.dtype):
        return a
    host = a.get() if isinstance(a, DeviceArray) else a
    host = np.asarray(host, dtype=dtype)
    made = ndarray(host.shape, host.dtype)
    made.set(host)
    return made


def array(obj, dtype=None, copy: bool = True, order=None) -> ndarray:
    if isinstance(obj, ndarray) and not copy and (dtype is None or np.dtype(dtype) == obj.dtype):
        return obj
    host = obj.get() if isinstance(obj, DeviceArray) else obj
    host = np.array(host, dtype=dtype)
    made = ndarray(host.shape, host.dtype)
    made.set(host)
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
    return empty(shape, dtype, order).fill(0)


def ones(shape, dtype=float, order: str = "C") -> ndarray:
    return empty(shape, dtype, order).fill(1)


def full(shape, fill_value, dtype=None, order: str = "C") -> ndarray:
    return empty(shape, dtype if dtype is not None else np.asarray(fill_value).dtype, order).fill(fill_value)


def empty_like(a, dtype=None, order: str = "C", shape=None) -> ndarray:
    return empty(shape if shape is not None else a.shape, dtype or a.dtype)


def zeros_like(a, dtype=None, order: str = "C", shape=None) -> ndarray:
    return zeros(shape if shape is not None else a.shape, dtype or a.dtype)


def ones_like(a, dtype=None, order: str = "C", shape=None) -> ndarray:
    return ones(shape if shape is not None else a.shape, dtype or a.dtype)


def arange(start, stop=None, step=1, dtype=None) -> ndarray:
    host = np.arange(start, stop, step, dtype=dtype) if stop is not None else np.arange(start, dtype=dtype)
    return asarray(host)


def allclose(a, b, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False) -> bool:
    return bool(np.allclose(asnumpy(a), asnumpy(b), rtol=rtol, atol=atol, equal_nan=equal_nan))


def array_equal(a, b) -> bool:
    return bool(np.array_equal(asnumpy(a), asnumpy(b)))


def get_array_module(*args):
    """CuPy's helper for code that runs on both: this module when any argument is on the
    device, else NumPy."""
    import sys

    return sys.modules[__name__] if any(isinstance(a, DeviceArray) for a in args) else np


# -- raw kernels -----------------------------------------------------------------------------


def _argument(value, param: "_cuda_c.Param", index: int, kernel: str):
    what = param.describe(index, kernel)
    if isinstance(value, DeviceArray):
        return _cuda_c.pointer(value.ptr, param, what, allocation_start=value.starts_allocation)
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
            _program = _cuda_c.Program(text, source_name, _cuda_c.parse_options(self.options))
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
                code, _core.relative_path(str(path)), _cuda_c.parse_options(options)
            )
        else:
            text, source_name = _cuda_c.mapped_source(code, "kernel.cu")
            self._program = _cuda_c.Program(text, source_name, _cuda_c.parse_options(options))
        self.code = code
        self.options = tuple(options)
        self.name_expressions = tuple(name_expressions or ())
        self._functions = {}

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
