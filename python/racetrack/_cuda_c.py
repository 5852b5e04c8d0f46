"""CUDA C kernels from Python source strings, as PyCUDA's ``SourceModule`` and CuPy's
``RawKernel``/``RawModule`` take them: compiled with ``racetrack.compile_cuda``, their by-value
arguments checked against the kernel's own parameters, and launched with ``racetrack.launch``.

Reports name the ``.py`` line: when the kernel's text stands verbatim in the calling file (a
triple-quoted string), a ``#line`` directive tells NVRTC where it starts, so a race in the
kernel is reported at ``histogram.py:14`` rather than at a line of an unnamed ``.cu``.
"""

from __future__ import annotations

import functools
import os
import re
import sys
from dataclasses import dataclass
from typing import Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np

from . import _core, _native

_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))
#: Headers the libraries ship for kernels (CuPy's `cupy/complex.cuh`, PyCUDA's
#: `pycuda-complex.hpp`), searched after the user's own include directories.
_LIBRARY_HEADERS = os.path.join(_PACKAGE_DIR, "include")


# ---------------------------------------------------------------------------------------------
# Where the user is: the first frame outside this package.


def user_frame():
    """The innermost frame whose code is not Racetrack's: the line that called a face."""
    frame = sys._getframe(1)
    while frame is not None:
        filename = os.path.abspath(frame.f_code.co_filename)
        if not filename.startswith(_PACKAGE_DIR + os.sep):
            return frame
        frame = frame.f_back
    return None


def user_location() -> Tuple[str, int]:
    """``(file, line)`` of the call into the face, the file relative to the working directory."""
    frame = user_frame()
    if frame is None:
        return ("<unknown>", 0)
    return (frame.f_code.co_filename, frame.f_lineno)


def where() -> str:
    path, line = user_location()
    return f"{_core.relative_path(path)}:{line}"


def locate(snippet: str, path: str, near_line: int, window: Optional[int] = None) -> Optional[int]:
    """The line of ``path`` on which ``snippet`` starts, when it stands there verbatim (the
    occurrence nearest ``near_line``, and within ``window`` lines of it when given); ``None``
    otherwise."""
    if not snippet.strip():
        return None
    try:
        with open(path, encoding="utf-8") as file:
            text = file.read()
    except (OSError, UnicodeDecodeError):
        return None
    best = None
    start = text.find(snippet)
    while start != -1:
        line = text.count("\n", 0, start) + 1
        if best is None or abs(line - near_line) < abs(best - near_line):
            best = line
        start = text.find(snippet, start + 1)
    if best is None or (window is not None and abs(best - near_line) > window):
        return None
    return best


def line_directive(line: int, path: str) -> str:
    """A ``#line`` directive: the next line of the source is ``path:line``."""
    escaped = path.replace("\\", "\\\\").replace('"', '\\"')
    return f'#line {line} "{escaped}"\n'


def mapped_source(code: str, fallback_name: str, prefix: str = "", suffix: str = "") -> Tuple[str, str]:
    """``(source, name)``: ``code`` between ``prefix`` and ``suffix``, its lines named as the
    calling ``.py`` file's when the text stands there, else as ``fallback_name``'s."""
    path, near = user_location()
    start = locate(code, path, near)
    if start is None:
        return (prefix + line_directive(1, fallback_name) + code + suffix, fallback_name)
    name = _core.relative_path(path)
    return (prefix + line_directive(start, name) + code + suffix, name)


#: How far from the constructor's line a generated kernel's snippet may stand and still be taken
#: for the one given: a short expression (``x[i]*y[i]``) can stand elsewhere in the file too.
SNIPPET_WINDOW = 30


def assemble_generated(
    template: str,
    snippets: Dict[str, str],
    name: str,
    mapped: Sequence[str],
    location: Optional[Tuple[str, int]] = None,
) -> str:
    """A generated kernel's source (PyCUDA's and CuPy's ``ElementwiseKernel`` and
    ``ReductionKernel``): ``template`` with each ``@@KEY@@`` line replaced by ``snippets[KEY]``.
    A snippet of ``mapped`` (code that can touch memory) found verbatim near ``location`` (the
    constructor's ``(file, line)``; the calling line when not given) is named as its lines
    there (``#line``), so a finding in it names the ``.py`` line; the template's own lines keep
    their numbers in ``name``."""
    path, near = location if location is not None else user_location()
    shown = _core.relative_path(path)
    out = [line_directive(1, name).rstrip("\n")]
    for number, line in enumerate(template.split("\n"), start=1):
        key = line.strip()
        if key.startswith("@@") and key.endswith("@@"):
            code = snippets[key.strip("@")]
            found = locate(code, path, near, window=SNIPPET_WINDOW) if key.strip("@") in mapped else None
            if found is not None:
                out.append(line_directive(found, shown).rstrip("\n"))
            out.append(code)
            out.append(line_directive(number + 1, name).rstrip("\n"))
        else:
            out.append(line)
    return "\n".join(out) + "\n"


# ---------------------------------------------------------------------------------------------
# Compiler options as NVRTC's command line spells them.


@dataclass(frozen=True)
class CompileOptions:
    include_dirs: Tuple[str, ...] = ()
    defines: Tuple[str, ...] = ()
    std: Optional[str] = None


def _flag_value(tokens: List[str], index: int, forms: Tuple[str, ...]) -> Tuple[Optional[str], int]:
    """The value of the flag at ``tokens[index]`` when it is one of ``forms`` (``-I dir``,
    ``-Idir``, ``--include-path=dir``), and the index after it."""
    token = tokens[index]
    for form in forms:
        if token == form:
            if index + 1 >= len(tokens):
                raise ValueError(f"compiler option {token} needs a value")
            return tokens[index + 1], index + 2
        if form.startswith("--") and token.startswith(form + "="):
            return token[len(form) + 1 :], index + 1
        if not form.startswith("--") and token.startswith(form) and len(token) > len(form):
            rest = token[len(form) :]
            return (rest[1:] if rest.startswith("=") else rest), index + 1
    return None, index + 1


def parse_options(options: Optional[Sequence[str]], include_dirs: Sequence[str] = ()) -> CompileOptions:
    """``-I``, ``-D`` and ``-std`` from ``options``; the rest (``-use_fast_math``, ``-O3``,
    ``-arch=…``, ``-lineinfo``) changes no result the checkers look at, and is left out."""
    dirs = [str(d) for d in include_dirs]
    defines: List[str] = []
    std = None
    tokens = [str(token) for token in options or ()]
    index = 0
    while index < len(tokens):
        include, after_include = _flag_value(tokens, index, ("-I", "--include-path"))
        define, after_define = _flag_value(tokens, index, ("-D", "--define-macro"))
        standard, after_standard = _flag_value(tokens, index, ("-std", "--std"))
        if include is not None:
            dirs.append(include)
            index = after_include
        elif define is not None:
            defines.append(define)
            index = after_define
        elif standard is not None:
            # NVRTC 13's default is C++17, which takes C++11 and C++14 code.
            std = standard if standard in ("c++17", "c++20") else None
            index = after_standard
        else:
            index += 1
    return CompileOptions(tuple(dirs), tuple(defines), std)


# ---------------------------------------------------------------------------------------------
# Kernel parameters, read from the PTX's `.entry` signature.


@dataclass(frozen=True)
class Param:
    """One kernel parameter: its PTX type (``u32``, ``s64``, ``f32``, ``b8``) and size in bytes;
    ``array`` for a struct passed by value (``.b8 name[12]``)."""

    ptx_type: str
    size: int
    array: bool
    cpp: str = ""

    @property
    def is_float(self) -> bool:
        return self.ptx_type in ("f32", "f64") and not self.array

    @property
    def is_signed(self) -> bool:
        return self.ptx_type.startswith("s")

    def describe(self, index: int, kernel: str) -> str:
        shown = f" (`{self.cpp}`)" if self.cpp else ""
        return f"argument {index} of {kernel}{shown}"


_ENTRY = re.compile(r"\.entry\s+([\w$]+)\s*\((.*?)\)", re.S)
_PARAM = re.compile(
    r"\.param\s+(?:\.align\s+\d+\s+)?\.(\w+)\b[^,\n]*?\s([\w$]+)(?:\[(\d+)\])?\s*(?:,|$)", re.M
)
_PTX_BYTES = {"8": 1, "16": 2, "32": 4, "64": 8}


def entry_params(ptx: str) -> Dict[str, List[Param]]:
    """Each kernel of ``ptx`` and its parameters."""
    entries = {}
    for match in _ENTRY.finditer(ptx):
        params = []
        for param in _PARAM.finditer(match.group(2)):
            ptx_type, count = param.group(1), param.group(3)
            size = _PTX_BYTES.get(ptx_type[1:], 0)
            if count is not None:
                params.append(Param(ptx_type, size * int(count), True))
            else:
                params.append(Param(ptx_type, size, False))
        entries[match.group(1)] = params
    return entries


# ---------------------------------------------------------------------------------------------
# A source and its kernels.

_LAUNCH_BOUNDS = re.compile(r"__launch_bounds__\s*\([^)]*\)")
_GLOBAL_NAME = re.compile(r"__global__\s+(?:[\w:<>,*&\s]+?\s+)?(\w+)\s*\(")


_INSTANTIATION = re.compile(r"template\s+__global__\s+void\s+([\w:]+\s*<[^;()]*>)\s*\(")


def kernel_names(source: str) -> List[str]:
    """The ``__global__`` functions a source defines, as written, then its explicit template
    instantiations (``weigh<float>``): a first guess, for compiling a module eagerly;
    ``get_function`` asks the compiler."""
    plain = _LAUNCH_BOUNDS.sub("", source)
    return _GLOBAL_NAME.findall(plain) + _INSTANTIATION.findall(plain)


@dataclass
class Kernel:
    """One kernel ready to launch: its module, the symbol it is defined under, its params."""

    module: _native.PtxModule
    symbol: str
    name: str
    params: List[Param]


class Program:
    """A CUDA C source, compiled once for all its plain kernels. ``__constant__`` and
    ``__device__`` variables live in the first module made, which every kernel of it shares,
    as a module's kernels share them on a GPU."""

    def __init__(
        self,
        source: str,
        name: str,
        options: CompileOptions,
        compile_error: Optional[Callable[[str, "Program"], Exception]] = None,
    ):
        self.source = source
        self.name = name
        self.options = options
        #: Makes the face's own exception (PyCUDA's ``CompileError``, CuPy's
        #: ``CompileException``) from NVRTC's log, so a traceback names the library's class.
        self.compile_error = compile_error
        self._module: Optional[_native.PtxModule] = None
        self._entries: Dict[str, List[Param]] = {}
        self._kernels: Dict[str, Kernel] = {}

    def _compile(self, entry: str) -> _native.CompiledKernel:
        try:
            return _native.compile_cuda(
                self.source,
                self.name,
                entry,
                include_dirs=list(self.options.include_dirs) + [_LIBRARY_HEADERS],
                defines=list(self.options.defines),
                std=self.options.std,
            )
        except _core.CompileError as error:
            if self.compile_error is None:
                raise
            raise self.compile_error(str(error), self) from None

    def compile_eagerly(self) -> None:
        """Compiles now, so that a source NVRTC refuses raises ``CompileError`` here, as
        PyCUDA's ``SourceModule`` does; a source whose kernels need name expressions waits."""
        for name in kernel_names(self.source):
            try:
                self.kernel(name)
                return
            except ValueError:
                continue

    def module(self) -> Optional[_native.PtxModule]:
        return self._module

    def kernel(self, name: str) -> Kernel:
        """The kernel ``name`` (as written: ``"saxpy"``, ``"reduce<float, 256>"``)."""
        found = self._kernels.get(name)
        if found is not None:
            return found
        compiled = self._compile(name)
        module = self._module
        if module is None or compiled.symbol not in self._entries:
            # The first compile makes the shared module; a template instantiated by name makes
            # its own (its PTX is the only one holding that instantiation).
            module = _native.PtxModule(compiled.ptx, self.name)
            entries = entry_params(compiled.ptx)
            if self._module is None:
                self._module = module
                self._entries = entries
        else:
            entries = self._entries
        params = entries.get(compiled.symbol)
        if params is None or len(params) != len(compiled.param_types):
            params = [
                Param(t.split("[")[0], b, "[" in t)
                for t, b in zip(compiled.param_types, compiled.param_bytes)
            ]
        cpp = list(compiled.cpp_params) if len(compiled.cpp_params) == len(params) else [""] * len(params)
        params = [Param(p.ptx_type, p.size, p.array, c) for p, c in zip(params, cpp)]
        found = Kernel(module, compiled.symbol, name, params)
        self._kernels[name] = found
        return found


# ---------------------------------------------------------------------------------------------
# By-value arguments: what the GPU would read, or a clear error where it would read garbage.

_LAUNCH_TYPE = {
    ("u", 1): "u8",
    ("s", 1): "i8",
    ("b", 1): "u8",
    ("u", 2): "u16",
    ("s", 2): "i16",
    ("b", 2): "u16",
    ("u", 4): "u32",
    ("s", 4): "i32",
    ("b", 4): "u32",
    ("u", 8): "u64",
    ("s", 8): "i64",
    ("b", 8): "u64",
}

_NUMPY_FOR_C = {
    ("f", 4): "np.float32",
    ("f", 8): "np.float64",
    ("s", 1): "np.int8",
    ("s", 2): "np.int16",
    ("s", 4): "np.int32",
    ("s", 8): "np.int64",
    ("u", 1): "np.uint8",
    ("u", 2): "np.uint16",
    ("u", 4): "np.uint32",
    ("u", 8): "np.uint64",
    ("b", 1): "np.uint8",
    ("b", 2): "np.uint16",
    ("b", 4): "np.uint32",
    ("b", 8): "np.uint64",
}


def numpy_hint(param: Param) -> str:
    """The NumPy scalar type that matches ``param``."""
    if param.array:
        return f"a NumPy structured scalar of {param.size} bytes"
    return _NUMPY_FOR_C.get((param.ptx_type[0], param.size), "a NumPy scalar of the right type")


def by_value(value: np.ndarray, param: Param, what: str) -> Tuple[str, object]:
    """``value`` (a 0-d or one-element NumPy array, typed as the library types it) as the
    launch argument for ``param``: what a GPU reads from it, the first ``param.size`` bytes.
    Where those bytes are not the value (a float for an int, a double for a float, too few
    bytes), the GPU would compute with garbage, so this raises ``TypeError`` instead."""
    dtype = value.dtype
    hint = numpy_hint(param)
    if "*" in param.cpp and not param.array and (dtype.kind not in "iu" or dtype.itemsize != 8):
        # An 8-byte integer may be an address (CuPy's `a.data.ptr`); anything else is a mistake.
        raise TypeError(
            f"{what} is a pointer, but the value given is {'an' if str(dtype)[0] in 'aeiou' else 'a'} "
            f"{dtype} number: pass a device array "
            "(a GPU would take the number's bytes for an address)"
        )
    if param.array:
        if dtype.itemsize < param.size:
            raise TypeError(
                f"{what} is a {param.size}-byte struct, but the value given is {dtype.itemsize} bytes"
            )
        return ("bytes", value.tobytes()[: param.size])
    if dtype.kind == "f" and dtype.itemsize == 2 and param.size == 2:
        return ("u16", int(value.view(np.uint16).reshape(())))
    if dtype.kind in "biu":
        if param.is_float:
            raise TypeError(
                f"{what} is a {param.size * 8}-bit float, but the value given is an integer "
                f"({dtype}): a GPU would read its bits as a float; pass {hint}(…)"
            )
        number = int(value.reshape(()))
        if dtype.itemsize < param.size:
            raise TypeError(
                f"{what} is {param.size} bytes, but the value given is a {dtype} of "
                f"{dtype.itemsize}: a GPU would read past it; pass {hint}(…)"
            )
        bits = param.size * 8
        if not -(1 << (bits - 1)) <= number < (1 << bits):
            raise TypeError(f"{what} is {bits}-bit, and {number} does not fit in it")
        unsigned = number & ((1 << bits) - 1)
        signed = unsigned - (1 << bits) if unsigned >= 1 << (bits - 1) else unsigned
        launch_type = _LAUNCH_TYPE[(param.ptx_type[0] if param.ptx_type[0] in "usb" else "b", param.size)]
        return (launch_type, signed if launch_type.startswith("i") else unsigned)
    if dtype.kind == "f":
        if not param.is_float:
            raise TypeError(
                f"{what} is an integer of {param.size} bytes, but the value given is a {dtype}: "
                f"a GPU would read its bits as an integer; pass {hint}(…)"
            )
        if dtype.itemsize != param.size:
            misread = "part of it" if dtype.itemsize > param.size else "past it"
            raise TypeError(
                f"{what} is a {param.size * 8}-bit float, but the value given is a {dtype} "
                f"({dtype.itemsize * 8}-bit): a GPU would read {misread}; pass {hint}(…)"
            )
        return (param.ptx_type, float(value.reshape(())))
    raise TypeError(f"{what}: a {dtype} cannot be passed by value to a {param.size}-byte parameter")


_DECLARED_NAME = re.compile(r"([A-Za-z_]\w*)\s*(?:\[\s*\])?\s*$")
# What ends a parameter known only by its type (a C++ kernel's, from its mangled name).
_TYPE_WORDS = {
    "bool",
    "char",
    "short",
    "int",
    "long",
    "float",
    "double",
    "unsigned",
    "signed",
    "void",
    "size_t",
    "__half",
}


def param_name(param: Param) -> str:
    """The parameter's name in the kernel's C (``x`` of ``const float *__restrict__ x``);
    empty when only its type is known."""
    words = param.cpp.replace("*", " ").replace("&", " ").split()
    found = _DECLARED_NAME.search(param.cpp)
    if len(words) < 2 or found is None or found.group(1) in _TYPE_WORDS:
        return ""
    return found.group(1)


# C element types whose size and kind (float or integer) a NumPy dtype must match: through a
# pointer of one of these, a GPU reads an array's bytes as that type. Plain `char` is left out
# (kernels take byte buffers through it and cast), as are types the parameter's text does not
# settle (a template's `T` is settled: a kernel instantiated by name lists its real types).
_POINTEE = {
    "float": ("f", 4),
    "double": ("f", 8),
    "__half": ("f", 2),
    "half": ("f", 2),
    "int": ("i", 4),
    "signed int": ("i", 4),
    "signed": ("i", 4),
    "unsigned": ("i", 4),
    "unsigned int": ("i", 4),
    "short": ("i", 2),
    "short int": ("i", 2),
    "unsigned short": ("i", 2),
    "unsigned short int": ("i", 2),
    "long": ("i", 8),
    "long int": ("i", 8),
    "unsigned long": ("i", 8),
    "long long": ("i", 8),
    "long long int": ("i", 8),
    "unsigned long long": ("i", 8),
    "unsigned long long int": ("i", 8),
    "size_t": ("i", 8),
    "int8_t": ("i", 1),
    "uint8_t": ("i", 1),
    "int16_t": ("i", 2),
    "uint16_t": ("i", 2),
    "int32_t": ("i", 4),
    "uint32_t": ("i", 4),
    "int64_t": ("i", 8),
    "uint64_t": ("i", 8),
    "bool": ("i", 1),
    "signed char": ("i", 1),
    "unsigned char": ("i", 1),
}
# The unsigned ones: data of the other signedness reads as other numbers where its top bit is set.
_UNSIGNED = {name for name in _POINTEE if name.startswith("unsigned") or name.startswith("uint") or name == "size_t"}
_QUALIFIERS = {"const", "volatile", "__restrict__", "restrict", "__restrict"}


def pointee(param: Param) -> Optional[str]:
    """The element type a pointer parameter names (``float`` of ``const float *__restrict__ x``),
    when it is one of the plain C types; ``None`` otherwise."""
    if param.cpp.count("*") != 1:
        return None
    words = [w for w in param.cpp.split("*")[0].split() if w not in _QUALIFIERS]
    name = " ".join(words)
    return name if name in _POINTEE else None


def check_elements(
    param: Param, dtype: np.dtype, what: str, contents: Optional[Callable[[], np.ndarray]] = None
) -> None:
    """Racetrack's own check, which the libraries do not make: an array whose elements are not
    the pointer's type is read by the GPU as that type (a float64 array through a ``float *``
    gives halves of doubles), silently wrong; this raises ``TypeError`` instead. Integers of the
    other signedness are the same bits, and the same numbers while their top bit is clear; when
    ``contents`` (the array's values now) holds one that would read as another number (-1
    through an ``unsigned int *``), that raises ``TypeError`` too."""
    element = pointee(param)
    if element is None:
        return
    kind, size = _POINTEE[element]
    dtype = np.dtype(dtype)
    dtype_kind = "f" if dtype.kind == "f" else "i" if dtype.kind in "biu" else dtype.kind
    if (dtype_kind, dtype.itemsize) == (kind, size):
        if contents is not None and dtype.kind in "iu" and (dtype.kind == "u") != (element in _UNSIGNED):
            _check_signedness(element, dtype, contents(), what)
        return
    raise TypeError(
        f"Racetrack found a type mismatch: {what} points to {element} ({size} bytes), but the "
        f"array given holds {dtype} ({dtype.itemsize} bytes): a GPU would read its bytes as "
        f"{element} and compute with wrong numbers, silently. Pass an array of "
        f"{_NUMPY_FOR_C.get((kind if kind == 'f' else 'u' if element in _UNSIGNED else 's', size), 'that type')} (a.astype(...))"
    )


def _check_signedness(element: str, dtype: np.dtype, values: np.ndarray, what: str) -> None:
    top_bit_set = values < 0 if dtype.kind == "i" else values >= (1 << (dtype.itemsize * 8 - 1))
    if not np.any(top_bit_set):
        return
    first = values.reshape(-1)[int(np.argmax(top_bit_set.reshape(-1)))]
    seen = np.asarray(first, dtype).view(_other_signedness(dtype))
    raise TypeError(
        f"Racetrack found a signedness mismatch: {what} points to {element}, but the array "
        f"given holds {dtype} values that it reads as other numbers ({first} reads as {seen}). "
        f"Pass an array of {_other_signedness(dtype).name} (a.astype(...)), or make the "
        "parameter's type match the array's"
    )


def _other_signedness(dtype: np.dtype) -> np.dtype:
    return np.dtype(f"{'u' if dtype.kind == 'i' else 'i'}{dtype.itemsize}")


def pointer(
    address: int,
    param: Param,
    what: str,
    *,
    allocation_start: bool = False,
    dtype=None,
    contents: Optional[Callable[[], np.ndarray]] = None,
) -> Tuple[str, object]:
    """A device address for ``param``, which must be 8 bytes wide to hold it. When the address
    is the start of an allocation, reports name that buffer after the parameter
    (``histo[65]``), as the Numba face names an array after its argument. ``dtype``, the
    elements of the array given, is checked against the pointer's type when known."""
    if param.array or param.size != 8 or param.is_float:
        raise TypeError(f"{what} is not a pointer, but a device array was given for it")
    if dtype is not None:
        check_elements(param, dtype, what, contents)
    name = param_name(param)
    if allocation_start and name:
        _core.device().relabel(int(address), name)
    return ("ptr", int(address))


def launch(
    kernel: Kernel, grid, block, args, *, shared_bytes: int = 0, where_text: str = "", stream: Optional[int] = None
) -> _native.LaunchResult:
    """Launches with the enclosing ``racetrack.checking`` options (see :func:`racetrack.launch`),
    queued on the emulator's ``stream`` when given."""
    return _core.launch(
        kernel.module,
        kernel.symbol,
        grid,
        block,
        args,
        shared_bytes=shared_bytes,
        kernel_name=kernel.name,
        where=where_text,
        stream=stream,
    )


def user_facing(function):
    """Wraps a face's entry point so that a finding's or a compile error's traceback ends at the
    user's line, not inside Racetrack."""

    @functools.wraps(function)
    def wrapper(*args, **kwargs):
        try:
            return function(*args, **kwargs)
        except (_core.FindingError, _core.CompileError) as error:
            raise error.with_traceback(None) from None

    return wrapper


def check_arity(kernel: Kernel, count: int) -> None:
    if count != len(kernel.params):
        raise TypeError(f"{kernel.name} takes {len(kernel.params)} arguments, {count} given")
