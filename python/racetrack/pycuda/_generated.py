"""What ``ElementwiseKernel`` and ``ReductionKernel`` share: CUDA C generated around the
user's snippets, each snippet's lines named as the ``.py`` line it was written on (so a bad
access in ``operation`` is reported there), and launches with typed arguments."""

from __future__ import annotations

from typing import Dict, List, Sequence

import numpy as np

from .. import _cuda_c
from .._device_array import DeviceArray
from .driver import DeviceAllocation
from .tools import ScalarArg, VectorArg


#: How far from the constructor's line a snippet may stand and still be taken for the one given:
#: a short expression (``x[i]*y[i]``) can stand elsewhere in the file too.
SNIPPET_WINDOW = 30


def assemble(template: str, snippets: Dict[str, str], name: str, mapped: Sequence[str]) -> str:
    """The generated source: ``template`` with each ``@@KEY@@`` line replaced by
    ``snippets[KEY]``. A snippet of ``mapped`` (code that can touch memory) found verbatim near
    the calling line of the ``.py`` file is named as its lines there (``#line``); the
    template's own lines keep their numbers in ``name``."""
    path, near = _cuda_c.user_location()
    shown = _cuda_c._core.relative_path(path)
    out = [_cuda_c.line_directive(1, name).rstrip("\n")]
    for number, line in enumerate(template.split("\n"), start=1):
        key = line.strip()
        if key.startswith("@@") and key.endswith("@@"):
            code = snippets[key.strip("@")]
            found = (
                _cuda_c.locate(code, path, near, window=SNIPPET_WINDOW) if key.strip("@") in mapped else None
            )
            if found is not None:
                out.append(_cuda_c.line_directive(found, shown).rstrip("\n"))
            out.append(code)
            out.append(_cuda_c.line_directive(number + 1, name).rstrip("\n"))
        else:
            out.append(line)
    return "\n".join(out) + "\n"


def address_of(value, what: str) -> int:
    if isinstance(value, DeviceArray):
        return value.ptr
    if isinstance(value, DeviceAllocation):
        return int(value)
    interface = getattr(value, "__cuda_array_interface__", None)
    if interface is not None:
        return int(interface["data"][0])
    raise TypeError(
        f"{what} is an array argument: pass a GPUArray (gpuarray.to_gpu(a)), not {type(value).__name__}"
    )


def typed_args(kernel: "_cuda_c.Kernel", declared: Sequence, values: Sequence) -> List:
    """Launch arguments for the user's declared arguments, scalars converted to their declared
    types as PyCUDA's generated kernels convert them."""
    out = []
    for index, (argument, value) in enumerate(zip(declared, values)):
        param = kernel.params[index]
        what = f"argument {index} of {kernel.name} (`{argument.declarator()}`)"
        if isinstance(argument, VectorArg):
            if isinstance(value, DeviceArray) and value.dtype != argument.dtype:
                raise TypeError(f"{what} is a {argument.dtype} array, but a {value.dtype} array was given")
            start = value.starts_allocation if isinstance(value, DeviceArray) else False
            out.append(_cuda_c.pointer(address_of(value, what), param, what, allocation_start=start))
        elif isinstance(argument, ScalarArg):
            out.append(_cuda_c.by_value(np.asarray(value, dtype=argument.dtype), param, what))
        else:
            raise TypeError(f"{what}: unknown argument kind {argument!r}")
    return out


def first_size(declared: Sequence, values: Sequence) -> int:
    for argument, value in zip(declared, values):
        if isinstance(argument, VectorArg):
            size = getattr(value, "size", None)
            if size is None:
                raise TypeError(f"the array argument {argument.name} must be a GPUArray, to know its size")
            return int(size)
    raise TypeError("a generated kernel needs at least one array argument, to know how many elements to do")
