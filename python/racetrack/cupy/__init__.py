"""``import racetrack.cupy as cp``: CuPy's ``RawKernel`` and ``RawModule`` on Racetrack's
emulator, with the few array helpers tutorials use with them (``asarray``, ``asnumpy``,
``zeros``, ``empty``, ``ones``, ``arange``, ``*_like``).

Kernel source written in the `.py` file is compiled so that reports name its `.py` lines. On a
GPU, ``import cupy as cp`` runs the same code.
"""

from __future__ import annotations

import sys
from typing import Dict, Optional, Sequence, Tuple

import numpy as np

from .. import _core
from .._source import caller_file, compile_entry, describe, param_name, scalar_arg
from ..cuda._arrays import DeviceNDArray

__all__ = [
    "RawKernel",
    "RawModule",
    "ndarray",
    "asarray",
    "array",
    "asnumpy",
    "zeros",
    "zeros_like",
    "empty",
    "empty_like",
    "ones",
    "ones_like",
    "arange",
    "cuda",
]


class _Memory:
    def __init__(self, array: "ndarray"):
        self._array = array

    @property
    def ptr(self) -> int:
        return self._array.address


class ndarray(DeviceNDArray):
    """An array in the emulator's memory, as far as a ``RawKernel`` tutorial uses CuPy's."""

    @property
    def data(self) -> _Memory:
        return _Memory(self)

    def get(self, stream=None) -> np.ndarray:
        return self.copy_to_host()

    def set(self, arr, stream=None) -> None:
        self.copy_to_device(arr)

    def __repr__(self) -> str:
        return f"racetrack.cupy.ndarray({self.get()!r})"


# CuPy's dtype names, as tutorials write them (cp.float32).
bool_, int8, int16, int32, int64 = np.bool_, np.int8, np.int16, np.int32, np.int64
uint8, uint16, uint32, uint64 = np.uint8, np.uint16, np.uint32, np.uint64
float16, float32, float64 = np.float16, np.float32, np.float64


def _new(shape, dtype, uninit: bool) -> ndarray:
    array = object.__new__(ndarray)
    DeviceNDArray.__init__(array, shape, dtype, "C", uninit=uninit)
    return array


def asarray(a, dtype=None) -> ndarray:
    if isinstance(a, ndarray) and (dtype is None or np.dtype(dtype) == a.dtype):
        return a
    host = np.ascontiguousarray(a.get() if isinstance(a, ndarray) else a, dtype=dtype)
    array = _new(host.shape, host.dtype, uninit=False)
    array.copy_to_device(host)
    return array


array = asarray


def asnumpy(a) -> np.ndarray:
    return a.get() if isinstance(a, DeviceNDArray) else np.asarray(a)


def empty(shape, dtype=np.float64) -> ndarray:
    """Uninitialized, as on a GPU: initcheck reports a kernel reading what nothing wrote."""
    return _new(shape, dtype, uninit=True)


def zeros(shape, dtype=np.float64) -> ndarray:
    return _new(shape, dtype, uninit=False)


def ones(shape, dtype=np.float64) -> ndarray:
    return asarray(np.ones(shape, dtype))


def arange(*args, dtype=None) -> ndarray:
    return asarray(np.arange(*args, dtype=dtype))


def empty_like(a, dtype=None) -> ndarray:
    return empty(a.shape, dtype or a.dtype)


def zeros_like(a, dtype=None) -> ndarray:
    return zeros(a.shape, dtype or a.dtype)


def ones_like(a, dtype=None) -> ndarray:
    return ones(a.shape, dtype or a.dtype)


def _dim3(value, what: str) -> Tuple[int, int, int]:
    return _core.dim3(value, what)


class RawKernel:
    """``RawKernel(code, name, options=(), name_expressions=None)``, launched as
    ``kernel(grid, block, args, shared_mem=0)``."""

    def __init__(
        self,
        code: str,
        name: str,
        options: Sequence[str] = (),
        backend: str = "nvrtc",
        translate_cucomplex: bool = False,
        enable_cooperative_groups: bool = False,
        jitify: bool = False,
        *,
        _source_file: Optional[str] = None,
    ):
        self.code = code
        self.name = name
        self.options = tuple(options)
        source_file = _source_file or caller_file(1)
        self._compiled, self._module = compile_entry(code, name, f"{name}.cu", self.options, source_file)

    @property
    def attributes(self) -> Dict[str, int]:
        return {"max_threads_per_block": 1024}

    def __call__(self, grid, block, args, *, shared_mem: int = 0, stream=None) -> None:
        kernel = self._compiled
        args = tuple(args)
        if len(args) != len(kernel.param_types):
            raise TypeError(
                f"{self.name} takes {len(kernel.param_types)} arguments "
                f"({', '.join(describe(kernel, i) for i in range(len(kernel.param_types)))}), {len(args)} given"
            )
        launch_args = []
        for index, value in enumerate(args):
            if isinstance(value, DeviceNDArray):
                if kernel.param_bytes[index] != 8:
                    raise TypeError(f"argument {index} of {self.name} is an array, but the parameter is {describe(kernel, index)}")
                _core.device().relabel(value._allocation.address, param_name(kernel, index))
                launch_args.append(("ptr", value.address))
            elif isinstance(value, np.ndarray):
                raise TypeError(
                    f"argument {index} of {self.name} is a NumPy array in host memory; a kernel takes "
                    "device arrays: cp.asarray(a)"
                )
            else:
                launch_args.append(scalar_arg(kernel, index, value))
        caller = sys._getframe(1)
        where = f"{_core.relative_path(caller.f_code.co_filename)}:{caller.f_lineno}"
        try:
            _core.launch(
                self._module,
                kernel.symbol,
                _dim3(grid, "grid"),
                _dim3(block, "block"),
                launch_args,
                shared_bytes=int(shared_mem),
                kernel_name=self.name,
                where=where,
            )
        except _core.FindingError as error:
            raise error.with_traceback(None) from None


class RawModule:
    """``RawModule(code=..., options=(), name_expressions=None)``; ``get_function(name)``
    compiles that kernel (a C++ name such as ``"scale<float>"`` among the name expressions)."""

    def __init__(
        self,
        code: Optional[str] = None,
        path: Optional[str] = None,
        options: Sequence[str] = (),
        backend: str = "nvrtc",
        translate_cucomplex: bool = False,
        *,
        name_expressions: Optional[Sequence[str]] = None,
        jitify: bool = False,
        enable_cooperative_groups: bool = False,
    ):
        if code is None:
            if path is None:
                raise ValueError("RawModule needs code= or path=")
            with open(path, encoding="utf-8") as file:
                code = file.read()
            self._source_file = path
        else:
            # Where the code is written, found now: get_function may be called from elsewhere.
            self._source_file = caller_file(1)
        self.code = code
        self.options = tuple(options)
        self.name_expressions = tuple(name_expressions or ())
        self._kernels: Dict[str, RawKernel] = {}

    def get_function(self, name: str) -> RawKernel:
        kernel = self._kernels.get(name)
        if kernel is None:
            kernel = RawKernel(self.code, name, self.options, _source_file=self._source_file)
            self._kernels[name] = kernel
        return kernel


class _Device:
    def __init__(self, device: int = 0):
        self.id = device

    def synchronize(self) -> None:
        """Every launch has finished when it returns, on the emulator."""

    def use(self) -> None:
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        pass


class _Stream:
    def __init__(self, non_blocking: bool = False, null: bool = False):
        self.ptr = 0

    def synchronize(self) -> None:
        pass

    def use(self) -> "_Stream":
        return self

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        pass


class _Runtime:
    @staticmethod
    def deviceSynchronize() -> None:
        pass

    @staticmethod
    def getDeviceCount() -> int:
        return 1


class cuda:  # noqa: N801  (CuPy's namespace is lower-case)
    """``cp.cuda.Device().synchronize()``, ``cp.cuda.Stream``, ``cp.cuda.runtime``."""

    Device = _Device
    Stream = _Stream
    runtime = _Runtime
