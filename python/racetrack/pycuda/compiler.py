"""``racetrack.pycuda.compiler.SourceModule``: CUDA C compiled by Racetrack's pinned NVRTC,
wrapped in ``extern "C"`` as PyCUDA does, at the lines of the `.py` file it is written in."""

from __future__ import annotations

import sys
from typing import Dict, Optional, Sequence

import numpy as np

from .. import _core
from .._core import CompileError  # noqa: F401  (pycuda.compiler raises it too)
from .._source import caller_file, compile_entry, describe, param_name, scalar_arg
from ..cuda._arrays import DeviceNDArray
from . import driver


class SourceModule:
    """``SourceModule(source, options=None, no_extern_c=False, include_dirs=[])``;
    ``get_function(name)`` compiles that kernel."""

    def __init__(
        self,
        source: str,
        nvcc: str = "nvcc",
        options: Optional[Sequence[str]] = None,
        keep: bool = False,
        no_extern_c: bool = False,
        arch: Optional[str] = None,
        code: Optional[str] = None,
        cache_dir=None,
        include_dirs: Sequence[str] = (),
    ):
        self.source = source
        self.options = tuple(options or ()) + tuple(f"-I{d}" for d in include_dirs)
        self.no_extern_c = no_extern_c
        self._source_file = caller_file(1)
        self._functions: Dict[str, Function] = {}

    def get_function(self, name: str) -> "Function":
        function = self._functions.get(name)
        if function is None:
            compiled, module = compile_entry(
                self.source, name, "kernel.cu", self.options, self._source_file, extern_c=not self.no_extern_c
            )
            function = self._functions[name] = Function(name, compiled, module)
        return function


class Function:
    """A kernel: ``function(*args, block=(x, y, z), grid=(x, y), shared=0)``."""

    def __init__(self, name: str, compiled, module):
        self.__name__ = name
        self._compiled = compiled
        self._module = module

    def __call__(self, *args, block=(1, 1, 1), grid=(1, 1), shared: int = 0, stream=None, time_kernel: bool = False, texrefs=()):
        kernel = self._compiled
        if len(args) != len(kernel.param_types):
            raise TypeError(
                f"{self.__name__} takes {len(kernel.param_types)} arguments "
                f"({', '.join(describe(kernel, i) for i in range(len(kernel.param_types)))}), {len(args)} given"
            )
        launch_args = []
        copies_back = []
        staged = []
        for index, value in enumerate(args):
            name = param_name(kernel, index)
            if isinstance(value, driver.ArgumentHandler):
                buffer = DeviceNDArray(value.array.shape, value.array.dtype, uninit=not value.copy_in, label=name)
                staged.append(buffer)
                if value.copy_in:
                    buffer.copy_to_device(value.array)
                if value.copy_out:
                    copies_back.append((buffer, value.array))
                launch_args.append(("ptr", buffer.address))
            elif isinstance(value, DeviceNDArray):
                _core.device().relabel(value._allocation.address, name)
                launch_args.append(("ptr", value.address))
            elif isinstance(value, driver.DeviceAllocation):
                _core.device().relabel(value.address, name)
                launch_args.append(("ptr", value.address))
            elif isinstance(value, np.ndarray):
                raise TypeError(
                    f"argument {index} of {self.__name__} is a NumPy array in host memory: wrap it in "
                    "drv.In(a), drv.Out(a) or drv.InOut(a), or pass gpuarray.to_gpu(a)"
                )
            else:
                launch_args.append(scalar_arg(kernel, index, value))
        caller = sys._getframe(1)
        where = f"{_core.relative_path(caller.f_code.co_filename)}:{caller.f_lineno}"
        grid = tuple(grid) if isinstance(grid, (tuple, list)) else (grid,)
        try:
            result = _core.launch(
                self._module,
                kernel.symbol,
                _core.dim3(grid, "grid"),
                _core.dim3(block, "block"),
                launch_args,
                shared_bytes=int(shared),
                kernel_name=self.__name__,
                where=where,
            )
        except _core.FindingError as error:
            raise error.with_traceback(None) from None
        finally:
            for buffer, host in copies_back:
                buffer.copy_to_host(host)
        if time_kernel:
            return result.elapsed_ms / 1e3
        return None
