"""PyCUDA's prepared calls: ``func.prepare("PiP")`` fixes a kernel's arguments as ``struct``
format characters, and ``prepared_call`` packs the values it is given by them.

PyCUDA packs the whole list into one buffer (native sizes and alignment, the layout of the
kernel's parameters) and hands it to the driver unchecked: a format that does not match the
kernel is read as garbage on a GPU. Here each format item is matched with the kernel parameter it
lands on when ``prepare`` is called, and a mismatch (``'i'`` for a ``float``, ``'f'`` for a
pointer, one item too many) is an error naming the parameter and the character to use instead.
Values are packed by the ``struct`` module itself, so what PyCUDA refuses (``1.5`` for ``'i'``, a
``GPUArray`` for ``'P'``) is refused with ``struct.error`` here too.
"""

from __future__ import annotations

import re
import struct
from dataclasses import dataclass
from typing import List, Optional, Sequence, Tuple

import numpy as np

from .. import _cuda_c

_SIGNED = "bhilqn"
_UNSIGNED = "BHILQN"
# '?' and 'c' are one byte each; PyCUDA's own struct module adds 'F' and 'D' (complex64 and
# complex128, two floats or two doubles), which Python's lacks before 3.14.
_INTEGERS = _SIGNED + _UNSIGNED + "?c"
_FLOATS = "efd"
_COMPLEX = {"F": np.complex64, "D": np.complex128}
_ITEM = re.compile(r"(\d*)(.)")


@dataclass(frozen=True)
class Item:
    """One argument of a prepared format: its ``struct`` character and its size in bytes."""

    char: str
    size: int

    @property
    def dtype(self) -> Optional[np.dtype]:
        """The NumPy type of the bytes it packs (``None`` for ``'s'``, raw bytes)."""
        if self.char in _COMPLEX:
            return np.dtype(_COMPLEX[self.char])
        if self.char in _SIGNED:
            return np.dtype(f"i{self.size}")
        if self.char in _UNSIGNED or self.char in "?c":
            return np.dtype(f"u{self.size}")
        if self.char in _FLOATS:
            return np.dtype(f"f{self.size}")
        return None

    def shown(self) -> str:
        return f"{self.size}s" if self.char == "s" else self.char


def arg_format(arg_types) -> str:
    """The format string of ``prepare``'s argument: a string as it is, or a list whose items are
    format strings, NumPy scalar types, NumPy dtypes (a structured one packs its bytes), or
    anything else for a pointer, exactly as PyCUDA builds it."""
    if isinstance(arg_types, str):
        return arg_types
    text = ""
    for arg_type in arg_types:
        if isinstance(arg_type, type) and issubclass(arg_type, np.number):
            text += np.dtype(arg_type).char
        elif isinstance(arg_type, np.dtype):
            text += f"{arg_type.itemsize}s" if arg_type.char == "V" else arg_type.char
        elif isinstance(arg_type, str):
            text += arg_type
        else:
            text += np.dtype(np.uintp).char
    return text


def parse(text: str) -> Tuple[str, List[Item]]:
    """``(byte order, items)`` of a ``struct`` format: ``"2fP"`` is three arguments, ``"12s"``
    one of 12 bytes, ``'x'`` a pad byte that takes none."""
    body = "".join(text.split())
    order = "@"
    if body[:1] in ("@", "=", "<", ">", "!"):
        order, body = body[0], body[1:]
    if order in (">", "!"):
        raise ValueError(
            f"prepare({text!r}): '{order}' packs big-endian bytes, which a GPU reads as other "
            "numbers; leave the byte order out"
        )
    items: List[Item] = []
    for match in _ITEM.finditer(body):
        count = int(match.group(1)) if match.group(1) else 1
        char = match.group(2)
        if char == "x":
            continue
        if char in _COMPLEX:
            items.extend([Item(char, np.dtype(_COMPLEX[char]).itemsize)] * count)
            continue
        try:
            size = struct.calcsize(order + char)
        except struct.error as error:
            raise struct.error(f"prepare({text!r}): {error} ({char!r})") from None
        if char == "p":
            raise ValueError(
                f"prepare({text!r}): 'p' (a Pascal string) is no kernel parameter; use '{count}s'"
            )
        if char == "s":
            items.append(Item("s", count))
        else:
            items.extend([Item(char, size)] * count)
    return order, items


def _is_pointer(param: _cuda_c.Param) -> bool:
    return "*" in param.cpp


def _param_kind(param: _cuda_c.Param) -> str:
    if param.array:
        return f"a {param.size}-byte struct"
    if _is_pointer(param):
        return "a pointer"
    if param.is_float:
        return f"a {param.size * 8}-bit float"
    return f"a {param.size}-byte integer"


def _char_for(param: _cuda_c.Param) -> str:
    """The format character(s) that pack what ``param`` reads."""
    if param.array:
        return f"'{param.size}s'"
    if _is_pointer(param):
        return "'P'"
    if param.is_float:
        return "'f'" if param.size == 4 else "'d'"
    return {1: "'b' or 'B'", 2: "'h', 'H' or 'e'", 4: "'i' or 'I'", 8: "'q', 'Q' or 'P'"}.get(
        param.size, f"'{param.size}s'"
    )


def fits(item: Item, param: _cuda_c.Param) -> bool:
    """Whether the bytes ``item`` packs are what ``param`` reads on a GPU."""
    if item.char == "s" or item.char in _COMPLEX:
        return param.array and param.size == item.size
    if param.array or item.size != param.size:
        return False
    if item.char == "P":
        return not param.is_float
    if item.char in "fd":
        return param.is_float
    if item.char == "e":
        return not param.is_float  # a __half parameter is PTX's untyped .b16
    return not param.is_float


def check_format(kernel: _cuda_c.Kernel, text: str, items: Sequence[Item]) -> None:
    """Raises ``TypeError`` where the format and the kernel's parameters disagree."""
    if len(items) != len(kernel.params):
        raise TypeError(
            f"prepare({text!r}) describes {len(items)} arguments, but {kernel.name} takes "
            f"{len(kernel.params)}"
        )
    for index, (item, param) in enumerate(zip(items, kernel.params)):
        if not fits(item, param):
            raise TypeError(
                f"prepare({text!r}): {param.describe(index, kernel.name)} is {_param_kind(param)}, "
                f"but the format gives it '{item.shown()}' ({item.size} bytes), which a GPU would "
                f"misread; use {_char_for(param)}"
            )


def _hint(value) -> str:
    from .driver import ArgumentHandler

    if isinstance(value, ArgumentHandler):
        return (
            f"; {type(value).__name__}() works in a plain call (func(..., block=...)) only: "
            "copy the array with drv.to_device or gpuarray.to_gpu and pass that"
        )
    if hasattr(value, "gpudata"):
        return "; pass its .gpudata"
    return ""


def pack(order: str, item: Item, value) -> bytes:
    """``value``'s bytes as ``item`` packs them; ``struct.error`` for what ``struct`` refuses."""
    if item.char in _COMPLEX:
        try:
            return np.array(complex(value), dtype=_COMPLEX[item.char]).tobytes()
        except (TypeError, ValueError):
            raise struct.error("required argument is not a complex number") from None
    if item.char == "s" and not isinstance(value, (bytes, bytearray)):
        # A structured NumPy scalar (np.void) or array element: its bytes, as PyCUDA packs them.
        try:
            value = bytes(memoryview(np.asarray(value)))
        except TypeError:
            pass
    return struct.pack(order + item.shown(), value)


def launch_arg(kernel: _cuda_c.Kernel, index: int, order: str, item: Item, value):
    """The launch argument for parameter ``index``: ``value`` packed as ``item``."""
    from .driver import DeviceAllocation

    param = kernel.params[index]
    what = param.describe(index, kernel.name)
    try:
        packed = pack(order, item, value)
    except struct.error as error:
        raise struct.error(f"{what}, prepared as '{item.shown()}': {error}{_hint(value)}") from None
    if item.char == "s" or item.char in _COMPLEX:
        return ("bytes", packed)
    if item.char == "P" or _is_pointer(param):
        # A pointer parameter names the buffer it is handed in reports, as in a plain call.
        owns_start = isinstance(value, DeviceAllocation) and value.owns_start
        address = int(np.frombuffer(packed, dtype=np.uint64)[0])
        return _cuda_c.pointer(address, param, what, allocation_start=owns_start)
    return _cuda_c.by_value(np.frombuffer(packed, dtype=item.dtype).reshape(()), param, what)
