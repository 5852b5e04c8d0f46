"""Numba's kernel argument ABI, from Python values to the emulator's ``(type, value)`` pairs.

A kernel's parameters are Numba's flattening of its arguments' types:

- an array (``types.Array``): meminfo (a null pointer), parent (a null pointer), nitems,
  itemsize, data (the device address), then its shape and its strides in bytes, one
  ``int64`` per dimension each;
- a boolean: one byte; an integer or float: itself, at its width;
- a complex number: its real and imaginary parts;
- a tuple: its items, each flattened in turn;
- a record (one element of a structured array): a pointer to a device copy of its bytes;
- a raw pointer (``types.CPointer`` in an explicit signature): the integer address itself, as
  ``__cuda_array_interface__["data"][0]`` gives it.

Host arrays and records are copied to the device before the launch and back after it, as Numba
does. Mapped and managed arrays are not staged: the kernel gets their own device memory, and
the host's side of it is brought up to date before the launch and after it (see _arrays.py).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, List, Tuple

import numba
import numpy as np
from numba.core import types as nbtypes

from numba.cuda.args import ArgHint, In, InOut, Out

from .._core import EmulatorError, device
from ._arrays import DeviceNDArray, _bytes_view, as_cuda_array, mapped_device_view


def numba_type(value):
    """The Numba type Numba would give ``value`` as a kernel argument."""
    if isinstance(value, ArgHint):
        return numba_type(value.value)
    if _foreign_device_array(value):
        return numba_type(as_cuda_array(value))
    if isinstance(value, DeviceNDArray):
        return nbtypes.Array(numba.from_dtype(value.dtype), value.ndim, value.get_numba_type_layout())
    mapped = mapped_device_view(value) if isinstance(value, np.ndarray) else None
    if mapped is not None:
        return numba_type(mapped)
    if isinstance(value, np.ndarray) and not (value.flags.c_contiguous or value.flags.f_contiguous):
        # Staged through a contiguous copy (see `Marshalled.add`), so typed as one.
        return nbtypes.Array(numba.from_dtype(value.dtype), value.ndim, "C")
    return numba.typeof(value, numba.core.typing.typeof.Purpose.argument)


def _foreign_device_array(value) -> bool:
    return not isinstance(value, (DeviceNDArray, np.ndarray)) and hasattr(value, "__cuda_array_interface__")


_SCALAR = {
    nbtypes.boolean: "bool",
    nbtypes.int8: "i8",
    nbtypes.int16: "i16",
    nbtypes.int32: "i32",
    nbtypes.int64: "i64",
    nbtypes.uint8: "u8",
    nbtypes.uint16: "u16",
    nbtypes.uint32: "u32",
    nbtypes.uint64: "u64",
    nbtypes.float32: "f32",
    nbtypes.float64: "f64",
}


def _raw_pointer(value, ty, label: str) -> int:
    """A ``CPointer`` argument: a device address given as an integer, as Numba takes it."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise TypeError(
            f"argument {label!r} is a {type(value).__name__}, but the kernel's signature says {ty}: "
            "pass a device address as an int, such as "
            "array.__cuda_array_interface__['data'][0]"
        )
    address = int(value)
    if not 0 <= address < 2**64:
        raise OverflowError(f"argument {label!r} is {address}, which is not a 64-bit address")
    return address


@dataclass
class Marshalled:
    """One launch's arguments on the device, and what to do after it."""

    args: List[Tuple[str, object]] = field(default_factory=list)
    #: Run after the launch, in order: copies of host arrays back to them.
    after: List[Callable[[], None]] = field(default_factory=list)
    #: Device arrays made for host arrays, kept alive until the copies back are done.
    staged: List[DeviceNDArray] = field(default_factory=list)

    def add(self, value, ty, label: str) -> None:
        if isinstance(ty, nbtypes.Array):
            self._add_array(value, ty, label)
        elif isinstance(ty, nbtypes.BaseTuple):
            for index, (item, item_ty) in enumerate(zip(value, ty.types)):
                self.add(item, item_ty, f"{label}[{index}]")
        elif isinstance(ty, nbtypes.Complex):
            part = "f32" if ty == nbtypes.complex64 else "f64"
            self.args.append((part, complex(value).real))
            self.args.append((part, complex(value).imag))
        elif isinstance(ty, nbtypes.Boolean):
            self.args.append(("bool", bool(value)))
        elif ty in _SCALAR:
            kind = _SCALAR[ty]
            self.args.append((kind, float(value) if kind[0] == "f" else int(value)))
        elif isinstance(ty, nbtypes.Integer):
            self.args.append((("i" if ty.signed else "u") + str(ty.bitwidth), int(value)))
        elif isinstance(ty, nbtypes.Float):
            self.args.append(("f" + str(ty.bitwidth), float(value)))
        elif isinstance(ty, nbtypes.Record):
            self._add_record(value, ty, label)
        elif isinstance(ty, nbtypes.CPointer):
            self.args.append(("ptr", _raw_pointer(value, ty, label)))
        else:
            raise TypeError(
                f"argument {label!r} is a {ty}, which racetrack.cuda cannot pass to a kernel "
                "(arrays, scalars, complex numbers and tuples of them can be passed)"
            )

    def _add_record(self, value, ty, label: str) -> None:
        """A record goes by pointer to a device copy, copied back after (Numba's InOut)."""
        record = np.asarray(value) if isinstance(value, np.void) else np.asarray(value).reshape(())
        if record.dtype.itemsize != ty.size:
            raise TypeError(f"argument {label!r} is a {record.dtype}, but the kernel's signature says {ty}")
        holder = np.array(record).reshape(1)
        array = DeviceNDArray(1, holder.dtype, uninit=False, label=label)
        device().write(array.address, _bytes_view(holder))
        self.staged.append(array)
        if isinstance(value, np.void):

            def copy_back(a=array, v=value):
                # An np.void from `array[i]` is a view of that array: field by field, it is written.
                written = a[0]
                for name in v.dtype.names or ():
                    v[name] = written[name]

            self.after.append(copy_back)
        self.args.append(("ptr", array.address))

    def _add_array(self, value, ty, label: str) -> None:
        # cuda.In(a), cuda.Out(a), cuda.InOut(a): which ways a host array is copied (a device
        # array is passed as it is, as Numba passes it).
        copy_in = copy_back = True
        if isinstance(value, ArgHint):
            copy_in, copy_back = not isinstance(value, Out) or isinstance(value, InOut), not isinstance(value, In)
            value = value.value
        mapped = mapped_device_view(value) if isinstance(value, np.ndarray) else None
        if mapped is not None:
            value = mapped
        if _foreign_device_array(value):
            # Another library's device array (CuPy's): the kernel works on its memory, as Numba
            # does through the CUDA Array Interface. Reports name it after the parameter when
            # it starts an allocation (a view into one keeps the allocation's name).
            value = as_cuda_array(value)
            try:
                device().relabel(value.address, label)
            except EmulatorError:
                pass
        elif isinstance(value, DeviceNDArray):
            device().relabel(value._allocation.address, label)
        if isinstance(value, DeviceNDArray):
            array = value
            if array._allocation.host is not None:
                # Mapped memory: the host's writes in, the kernel's out, as one memory would.
                array._allocation.push()
                self.after.append(array._allocation.pull)
        else:
            host = np.asarray(value)
            if numba.from_dtype(host.dtype) != ty.dtype or host.ndim != ty.ndim:
                raise TypeError(
                    f"argument {label!r} is a {numba_type(host)}, but the kernel's signature says {ty}"
                )
            staged_host = host
            if not (host.flags.c_contiguous or host.flags.f_contiguous):
                staged_host = np.ascontiguousarray(host)
            order = "F" if staged_host.flags.f_contiguous and not staged_host.flags.c_contiguous else "C"
            # cuda.Out(a) copies nothing in: the kernel's reads of it are uninitialized memory.
            array = DeviceNDArray(staged_host.shape, staged_host.dtype, order, uninit=not copy_in, label=label)
            if staged_host.nbytes and copy_in:
                device().write(array.address, _bytes_view(staged_host))
            self.staged.append(array)
            if copy_back and isinstance(value, np.ndarray) and value.flags.writeable:
                # Into the user's array as it is laid out (a strided one too), which a plain
                # copy_to_host refuses.
                self.after.append(lambda a=array, v=value: a.copy_to_host(v, _as_copy=False))
        self.args.extend(
            [
                ("ptr", 0),  # meminfo
                ("ptr", 0),  # parent
                ("i64", array.size),
                ("i64", array.dtype.itemsize),
                ("ptr", array.address),
            ]
        )
        self.args.extend(("i64", extent) for extent in array.shape)
        self.args.extend(("i64", stride) for stride in array.strides)
