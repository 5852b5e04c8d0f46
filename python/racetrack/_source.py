"""CUDA C written inside a Python file, compiled so that reports name the `.py` line.

PyCUDA's ``SourceModule`` and CuPy's ``RawKernel`` take the kernel as a string. When that
string is written out in the calling `.py` file (a triple-quoted literal), the source is
compiled under the `.py` file's name, preceded by as many empty lines as the literal is down
the file: NVRTC's errors and the checkers' reports then name the line of the `.py` file the
learner sees. A string built at run time is compiled as ``<name>.cu``.
"""

from __future__ import annotations

import functools
import re
import sys
from typing import Iterable, List, Optional, Sequence, Tuple

from . import _native
from ._core import relative_path


@functools.lru_cache(maxsize=64)
def _read(path: str) -> Optional[str]:
    try:
        with open(path, encoding="utf-8") as file:
            return file.read()
    except OSError:
        return None


def caller_file(depth: int) -> str:
    """The file of the frame ``depth`` levels above the caller."""
    return sys._getframe(depth + 1).f_code.co_filename


def place_in_file(code: str, path: str) -> Tuple[str, str]:
    """(the name to compile ``code`` under, ``code`` padded to its lines in that file), or
    ``("", code)`` when the code is not written out there exactly once."""
    text = _read(path)
    stripped = code.strip("\n")
    if not text or not stripped:
        return "", code
    at = text.find(stripped)
    if at < 0 or text.find(stripped, at + 1) >= 0:
        return "", code
    first_line = text.count("\n", 0, at)
    return relative_path(path), "\n" * first_line + stripped + "\n"


def split_options(options: Iterable[str]) -> Tuple[List[str], List[str], Optional[str]]:
    """nvcc-style options as (include dirs, defines, C++ standard); others are NVRTC's concern
    on a GPU and change nothing the emulator runs."""
    includes: List[str] = []
    defines: List[str] = []
    std = None
    pending = None
    for option in options:
        if pending is not None:
            (includes if pending == "-I" else defines).append(option)
            pending = None
        elif option in ("-I", "-D"):
            pending = option
        elif option.startswith("-I"):
            includes.append(option[2:])
        elif option.startswith("--include-path="):
            includes.append(option.split("=", 1)[1])
        elif option.startswith("-D"):
            defines.append(option[2:])
        elif option.startswith("--define-macro="):
            defines.append(option.split("=", 1)[1])
        elif option.startswith(("-std=", "--std=")):
            std = option.split("=", 1)[1]
    return includes, defines, std


def compile_entry(
    code: str,
    entry: str,
    fallback_name: str,
    options: Sequence[str],
    source_file: str,
    extern_c: bool = False,
) -> Tuple[_native.CompiledKernel, _native.PtxModule]:
    """Compiles ``entry`` of ``code``, written in ``source_file`` (see the module doc), and
    loads its PTX. ``extern_c`` wraps the code in ``extern "C" { … }`` as PyCUDA does, on its
    first and after its last line so that no line moves."""
    path, source = place_in_file(code, source_file)
    if not path:
        path, source = fallback_name, code
    if extern_c:
        source = 'extern "C" { ' + source + '\n}\n'

    includes, defines, std = split_options(options)
    kernel = _native.compile_cuda(source, path, entry, include_dirs=includes, defines=defines, std=std)
    return kernel, _native.PtxModule(kernel.ptx, path)


#: How a scalar argument is passed for each PTX parameter type.
_PARAM_KINDS = {
    "u8": "u8", "s8": "i8", "b8": "u8",
    "u16": "u16", "s16": "i16", "b16": "u16", "f16": "f16",
    "u32": "u32", "s32": "i32", "b32": "u32", "f32": "f32",
    "u64": "u64", "s64": "i64", "b64": "u64", "f64": "f64",
}  # fmt: skip


def scalar_arg(kernel: _native.CompiledKernel, index: int, value) -> Tuple[str, object]:
    """``value`` as parameter ``index`` takes it, as a ``(type, value)`` pair. A NumPy scalar
    must have the parameter's size, as on a GPU, where its bytes are passed as they are; a
    Python int goes to any integer parameter it fits."""
    import numpy as np

    ptx_type = kernel.param_types[index]
    kind = _PARAM_KINDS.get(ptx_type)
    if kind is None:
        raise TypeError(
            f"argument {index} of {kernel.entry}: the parameter is {describe(kernel, index)}, "
            "a struct by value; pass its bytes as C lays them out (numpy structured scalar)"
        )
    bits = int(kind[1:])
    if isinstance(value, (np.generic,)):
        if value.dtype.itemsize * 8 != bits:
            raise TypeError(
                f"argument {index} of {kernel.entry} is a {value.dtype} ({value.dtype.itemsize} bytes), "
                f"but the parameter is {describe(kernel, index)}: pass numpy.{_numpy_name(kind, _cpp(kernel, index))}(...)"
            )
        if value.dtype.kind == "f" and bits == 16:
            return ("u16", int(np.float16(value).view(np.uint16)))
        if value.dtype.kind == "f":
            return ("f" + str(bits), float(value))
        if value.dtype.kind == "b":
            return ("u8", int(bool(value)))
        integer = int(value)
        return (("i" if integer < 0 else "u") + str(bits), integer)
    if isinstance(value, bool):
        return ("u" + str(bits), int(value))
    if isinstance(value, int):
        if kind[0] == "f":
            raise TypeError(
                f"argument {index} of {kernel.entry} is an int, but the parameter is "
                f"{describe(kernel, index)}: pass numpy.{_numpy_name(kind, _cpp(kernel, index))}(...)"
            )
        return (("i" if value < 0 else "u") + str(bits), value)
    if isinstance(value, float):
        if kind != "f64":
            raise TypeError(
                f"argument {index} of {kernel.entry} is a Python float, passed as a double, but the "
                f"parameter is {describe(kernel, index)}: pass numpy.{_numpy_name(kind, _cpp(kernel, index))}(...)"
            )
        return ("f64", value)
    raise TypeError(f"argument {index} of {kernel.entry}: cannot pass a {type(value).__name__}")


def _numpy_name(kind: str, cpp: str = "") -> str:
    if kind[0] == "f":
        return "float" + kind[1:]
    unsigned = cpp.startswith(("unsigned", "size_t", "uint"))
    return ("uint" if unsigned else "int") + kind[1:]


def param_name(kernel: _native.CompiledKernel, index: int) -> str:
    """The parameter's name in the C++ declaration (`x` of `const float *x`), else `argN`."""
    cpp = kernel.cpp_params[index] if index < len(kernel.cpp_params) else ""
    words = re.findall(r"[A-Za-z_][A-Za-z0-9_]*", cpp)
    keywords = {"const", "volatile", "restrict", "__restrict__", "unsigned", "signed", "struct"}
    if len(words) >= 2 and words[-1] not in keywords and not cpp.rstrip().endswith("*"):
        return words[-1]
    return f"arg{index}"


def _cpp(kernel: _native.CompiledKernel, index: int) -> str:
    return kernel.cpp_params[index] if index < len(kernel.cpp_params) else ""


def describe(kernel: _native.CompiledKernel, index: int) -> str:
    cpp = kernel.cpp_params[index] if index < len(kernel.cpp_params) else ""
    return f"`{cpp}` (PTX .{kernel.param_types[index]})" if cpp else f"PTX .{kernel.param_types[index]}"
