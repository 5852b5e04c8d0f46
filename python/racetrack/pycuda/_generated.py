"""What ``ElementwiseKernel`` and ``ReductionKernel`` share: CUDA C generated around the
user's snippets, each snippet's lines named as the ``.py`` line it was written on (so a bad
access in ``operation`` is reported there), and launches with typed arguments."""

from __future__ import annotations

from typing import List, Sequence

import numpy as np

from .. import _cuda_c
from .._device_array import DeviceArray
from .driver import DeviceAllocation
from .tools import ScalarArg, VectorArg


#: How far from the constructor's line a snippet may stand (see ``_cuda_c.assemble_generated``).
SNIPPET_WINDOW = _cuda_c.SNIPPET_WINDOW
assemble = _cuda_c.assemble_generated


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


def contiguous_arrays(declared: Sequence, values: Sequence, message: str) -> None:
    """PyCUDA's generated kernels index each array as one contiguous run of memory, so they
    refuse a strided view (``x[::2]``) with ``RuntimeError(message)``, as PyCUDA does."""
    for argument, value in zip(declared, values):
        if isinstance(argument, VectorArg) and isinstance(value, DeviceArray) and not value.flags.forc:
            raise RuntimeError(message)


def first_size(declared: Sequence, values: Sequence) -> int:
    for argument, value in zip(declared, values):
        if isinstance(argument, VectorArg):
            size = getattr(value, "size", None)
            if size is None:
                raise TypeError(f"the array argument {argument.name} must be a GPUArray, to know its size")
            return int(size)
    raise TypeError("a generated kernel needs at least one array argument, to know how many elements to do")
