"""Numba's own compiler, run without a GPU: a kernel to PTX with line info into its `.py` file.

Kernels are written against ``racetrack.cuda``; Numba's typing knows ``numba.cuda``. Before
compiling, a kernel's globals (and closure cells) have every ``racetrack.cuda`` swapped for
``numba.cuda`` and every device function for the Numba dispatcher that compiles it, so Numba
sees exactly the program it would see with ``from numba import cuda``.
"""

from __future__ import annotations

import ast
import inspect
import re
import textwrap
import types as pytypes
import warnings
from typing import Any, Dict, List, Optional

import numba.cuda as numba_cuda
import numba.cuda.dispatcher as numba_dispatcher
from numba.cuda.core.errors import NumbaDebugInfoWarning

from .._core import relative_path

#: The compute capability Numba compiles for: CUDA 13's lowest, whose PTX the emulator runs.
COMPUTE_CAPABILITY = (7, 5)


class _EmulatedDevice:
    """What Numba asks the current device when it compiles a device function (only its compute
    capability): answered for the emulator, so no driver is looked for."""

    compute_capability = COMPUTE_CAPABILITY
    name = b"Racetrack PTX emulator"
    id = 0


def _no_driver_needed():
    return _EmulatedDevice


# Numba compiles a device function for "the current device" when a kernel calling it is typed;
# here that is the emulator. This is the only change made to Numba, and only in this process.
numba_dispatcher.get_current_device = _no_driver_needed


class DeviceFunction:
    """``@cuda.jit(device=True)``: compiled by Numba, for the emulator's capability, as part of
    each kernel that calls it."""

    def __init__(self, py_func, options: Dict[str, Any]):
        self.py_func = py_func
        self.options = options
        if "link" in options:
            from ._ffi import device_function_links

            device_function_links(options["link"])
        self._dispatcher = None
        self.__name__ = getattr(py_func, "__name__", "device_function")
        self.__doc__ = getattr(py_func, "__doc__", None)
        self.__wrapped__ = py_func

    def numba_dispatcher(self):
        if self._dispatcher is None:
            options = dict(self.options)
            options.pop("device", None)
            options["lineinfo"] = True
            # Set before the rewrite, so that a function that calls itself finds this one.
            self._dispatcher = numba_cuda.jit(device=True, **options)
            self._dispatcher = self._dispatcher(for_numba(self.py_func))
        return self._dispatcher

    def __call__(self, *args, **kwargs):
        raise TypeError(
            f"{self.__name__} is a device function: call it from a @cuda.jit kernel, not from Python"
        )

    def __repr__(self):
        return f"<racetrack device function {self.__name__}>"


def _numba_value(value):
    """``value`` as Numba must see it: Racetrack's face and device functions swapped."""
    from .. import cuda as racetrack_cuda

    if value is racetrack_cuda:
        return numba_cuda
    if isinstance(value, DeviceFunction):
        return value.numba_dispatcher()
    return value


def for_numba(py_func):
    """A copy of ``py_func`` whose globals and closure Numba can compile (see the module doc)."""
    globals_ = {name: _numba_value(value) for name, value in py_func.__globals__.items()}
    closure = None
    if py_func.__closure__:
        closure = tuple(
            pytypes.CellType(_numba_value(cell.cell_contents)) for cell in py_func.__closure__
        )
    copy = pytypes.FunctionType(
        py_func.__code__, globals_, py_func.__name__, py_func.__defaults__, closure
    )
    copy.__kwdefaults__ = py_func.__kwdefaults__
    copy.__qualname__ = py_func.__qualname__
    copy.__module__ = py_func.__module__
    return copy


_FILE_DIRECTIVE = re.compile(r'^(\s*\.file\s+\d+\s+")([^"]*)(".*)$', re.MULTILINE)


def compile_kernel(py_func, signature, options: Optional[Dict[str, Any]] = None) -> str:
    """PTX of ``py_func`` for ``signature`` (a tuple of Numba types), with line info naming its
    `.py` file relative to the working directory, as reports should."""
    options = dict(options or {})
    with warnings.catch_warnings():
        # A lambda (cuda.reduce(lambda a, b: a + b)) has no source of its own for line info;
        # its lines are the caller's, which is what reports should name anyway. Nor have the
        # kernels Numba generates around a (gu)vectorized function, whose body has lines.
        warnings.filterwarnings(
            "ignore", message=r".*(<lambda>|__vectorized_|__gufunc_)", category=NumbaDebugInfoWarning
        )
        ptx, _ = numba_cuda.compile_ptx(
            for_numba(py_func),
            signature,
            lineinfo=True,
            cc=COMPUTE_CAPABILITY,
            fastmath=bool(options.get("fastmath", False)),
            opt=bool(options.get("opt", True)),
        )
    ptx = _FILE_DIRECTIVE.sub(lambda m: m.group(1) + relative_path(m.group(2)) + m.group(3), ptx)
    return name_shared_arrays(place_the_exit(ptx, py_func), py_func)


_EXIT = re.compile(r"^(\s*\.loc\s+)(\d+)(\s+)0(\s+\d+\s*\n(?:\s*\n)*\s*ret;)", re.MULTILINE)


def place_the_exit(ptx: str, py_func) -> str:
    """Numba gives the kernel's final ``ret`` line 0 (no line), so a report of threads that
    exit without reaching a barrier would name a PTX line. A thread that runs off the end of the
    kernel leaves at its last line: the ``ret`` takes that line of the kernel's ``.py`` file."""
    try:
        source, first = inspect.getsourcelines(py_func)
        path = relative_path(inspect.getsourcefile(py_func) or "")
    except (OSError, TypeError):
        return ptx
    last = first + len(source) - 1
    files = {m.group(1): m.group(2) for m in re.finditer(r'^\s*\.file\s+(\d+)\s+"([^"]*)"', ptx, re.MULTILINE)}
    return _EXIT.sub(
        lambda m: m.group(1) + m.group(2) + m.group(3) + (str(last) if files.get(m.group(2)) == path else "0") + m.group(4),
        ptx,
    )


_SHARED_DECLARATION = re.compile(r"\.shared\s+(?:\.align\s+\d+\s+)?\.\w+\s+(_cudapy_smem_(\d+))\[")
_PTX_IDENTIFIER = re.compile(r"[A-Za-z][A-Za-z0-9_]*$")


def _names_a_symbol(name: str, ptx: str) -> bool:
    """Whether ``name`` already stands for something in ``ptx`` as a word of its own: not as a
    directive or state space (``.shared``, ``.global``), a register (``%r1``), a label (``$L``),
    an instruction's suffix (``ld.shared``) or part of a longer identifier. A variable called
    ``shared`` may then take the name; one called ``ret`` or ``bar`` may not (an opcode)."""
    return re.search(rf"(?<![\w.%$]){re.escape(name)}(?![\w$])", ptx) is not None


def _shared_array_names(py_func) -> List[str]:
    """The variables ``py_func`` assigns ``cuda.shared.array(...)`` to, in source order."""
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(py_func)))
    except (OSError, TypeError, SyntaxError):
        return []
    found = []
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
            and isinstance(node.value, ast.Call)
            and isinstance(node.value.func, ast.Attribute)
            and node.value.func.attr == "array"
            and isinstance(node.value.func.value, ast.Attribute)
            and node.value.func.value.attr == "shared"
        ):
            found.append((node.lineno, node.col_offset, node.targets[0].id))
    return [name for _, _, name in sorted(found)]


def name_shared_arrays(ptx: str, py_func) -> str:
    """Numba calls shared arrays ``_cudapy_smem_N``; reports should say ``cache[3]``. Numba
    numbers them in the order it lowers them, which is the kernel's source order, so when the
    kernel's own ``cuda.shared.array`` assignments are exactly the PTX's shared arrays (no
    device function declares one, no name is used twice), each takes its variable's name."""
    declared = sorted(
        {(int(m.group(2)), m.group(1)) for m in _SHARED_DECLARATION.finditer(ptx)}
    )
    names = _shared_array_names(py_func)
    if not declared or len(names) != len(declared) or len(set(names)) != len(names):
        return ptx
    if any(not _PTX_IDENTIFIER.match(name) or _names_a_symbol(name, ptx) for name in names):
        return ptx
    for (_, symbol), name in zip(declared, names):
        ptx = re.sub(rf"\b{symbol}\b", name, ptx)
    return ptx
