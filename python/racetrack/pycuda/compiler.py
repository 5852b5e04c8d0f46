"""``racetrack.pycuda.compiler.SourceModule``: CUDA C compiled with NVRTC for the emulator."""

from __future__ import annotations

import re
from typing import Optional, Sequence, Tuple

from .. import _cuda_c
from .._core import device
from .driver import DeviceAllocation, Function, LogicError, compile_error

DEFAULT_NVCC_FLAGS: list = []


_SYSTEM_INCLUDE = re.compile(r"^[ \t]*#[ \t]*include[ \t]*<[^>]+>", re.M)


def _system_includes(source: str) -> str:
    """The source's ``#include <…>`` lines, to come before ``extern "C" {``: nvcc's headers
    (``math.h``) tolerate C linkage around them, NVRTC's C++ ones do not. Included first, each
    header's guard makes its line inside the wrapper a no-op, and no line of the source moves."""
    return "".join(match.group(0).strip() + "\n" for match in _SYSTEM_INCLUDE.finditer(source))


class SourceModule:
    """A CUDA C source and its kernels, as PyCUDA's ``SourceModule``.

    As PyCUDA does, the source is wrapped in ``extern "C" { … }`` so kernels keep their names,
    unless ``no_extern_c=True`` (then ``get_function`` takes a C++ name as written,
    ``"reduce<float, 256>"``). ``options`` are compiler flags: ``-I``, ``-D`` and ``-std`` are
    honoured, the rest change nothing the checkers look at and are left out. A source NVRTC
    refuses raises ``pycuda.driver.CompileError`` here, as PyCUDA's does (its ``stderr`` is
    NVRTC's log; it is also a ``racetrack.CompileError``).

    When the source text stands verbatim in your ``.py`` file (a triple-quoted string), reports
    name that file and line; otherwise they name ``kernel.cu`` and the line in the source.
    """

    @_cuda_c.user_facing
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
        self.no_extern_c = no_extern_c
        prefix, suffix = ("", "") if no_extern_c else (_system_includes(source) + 'extern "C" {\n', "\n}\n")
        text, name = _cuda_c.mapped_source(source, "kernel.cu", prefix, suffix)
        self._program = _cuda_c.Program(
            text, name, _cuda_c.parse_options(options, include_dirs), compile_error
        )
        self._program.compile_eagerly()

    def get_function(self, name: str) -> Function:
        """The kernel ``name``; ``LogicError`` when the source defines none of that name.

        A new ``Function`` each time, as PyCUDA's, so that one caller's ``prepare`` is not
        another's; the compiled kernel under it is shared (``Program.kernel`` keeps it)."""
        try:
            return Function(self._program, name)
        except ValueError as error:
            raise LogicError(f"cuModuleGetFunction failed: named symbol not found: {error}") from None

    def get_global(self, name: str) -> Tuple[DeviceAllocation, int]:
        """A ``__constant__`` or ``__device__`` variable: ``(its memory, its size in bytes)``,
        shared by every kernel of this module."""
        module = self._program.module()
        found = device().symbol(module, name) if module is not None else None
        if found is None:
            raise LogicError(f"cuModuleGetGlobal failed: named symbol not found: {name}")
        address, size = found
        return DeviceAllocation(size, address=address, owner=self), size

    def get_texref(self, name: str):
        raise LogicError("texture references are not emulated (CUDA 12 removed them too)")


class DynamicSourceModule(SourceModule):
    """PyCUDA's module for dynamic parallelism; the emulator runs it as a plain module."""


def compile(
    source: str,
    nvcc: str = "nvcc",
    options=None,
    keep: bool = False,
    no_extern_c: bool = False,
    arch=None,
    code=None,
    cache_dir=None,
    include_dirs=(),
):  # noqa: A001 (PyCUDA's name)
    """The PTX PyCUDA would load (for the emulator's architecture)."""
    module = SourceModule(source, nvcc, options, keep, no_extern_c, arch, code, cache_dir, include_dirs)
    names = _cuda_c.kernel_names(source)
    if not names:
        raise LogicError("the source defines no __global__ function")
    return module._program._compile(names[0]).ptx.encode()
