"""``racetrack.pycuda.tools``: the type helpers PyCUDA's kernel generators use."""

from __future__ import annotations

import functools
import weakref
from dataclasses import dataclass

import numpy as np

_CTYPES = {
    np.dtype(np.bool_): "bool",
    np.dtype(np.int8): "signed char",
    np.dtype(np.uint8): "unsigned char",
    np.dtype(np.int16): "short",
    np.dtype(np.uint16): "unsigned short",
    np.dtype(np.int32): "int",
    np.dtype(np.uint32): "unsigned int",
    np.dtype(np.int64): "long long",
    np.dtype(np.uint64): "unsigned long long",
    np.dtype(np.float32): "float",
    np.dtype(np.float64): "double",
    # PyCUDA's complex type, from its header `pycuda-complex.hpp` (which racetrack ships too).
    np.dtype(np.complex64): "pycuda::complex<float>",
    np.dtype(np.complex128): "pycuda::complex<double>",
}

# C spellings a kernel's argument list may use, for the NumPy type behind each.
_DTYPES = {
    "bool": np.bool_,
    "char": np.int8,
    "signed char": np.int8,
    "unsigned char": np.uint8,
    "short": np.int16,
    "signed short": np.int16,
    "unsigned short": np.uint16,
    "int": np.int32,
    "signed int": np.int32,
    "signed": np.int32,
    "unsigned int": np.uint32,
    "unsigned": np.uint32,
    "long": np.int64,
    "signed long": np.int64,
    "unsigned long": np.uint64,
    "long long": np.int64,
    "signed long long": np.int64,
    "unsigned long long": np.uint64,
    "size_t": np.uint64,
    "ptrdiff_t": np.int64,
    "int8_t": np.int8,
    "uint8_t": np.uint8,
    "int16_t": np.int16,
    "uint16_t": np.uint16,
    "int32_t": np.int32,
    "uint32_t": np.uint32,
    "int64_t": np.int64,
    "uint64_t": np.uint64,
    "float": np.float32,
    "double": np.float64,
    "pycuda::complex<float>": np.complex64,
    "pycuda::complex<double>": np.complex128,
}


# CUDA's vector types (float3, int2, …) as PyCUDA registers them: NumPy records of 1 to 4
# fields x, y, z, w, each the C type's dtype. `gpuarray.vec` hands them out.
_VECTOR_BASES = {
    "char": np.int8,
    "uchar": np.uint8,
    "short": np.int16,
    "ushort": np.uint16,
    "int": np.int32,
    "uint": np.uint32,
    "long": np.int64,
    "ulong": np.uint64,
    "longlong": np.int64,
    "ulonglong": np.uint64,
    "float": np.float32,
    "double": np.float64,
}
VECTOR_TYPES = {}
for _base, _scalar in _VECTOR_BASES.items():
    for _count in (1, 2, 3, 4):
        _vector = np.dtype([(field, _scalar) for field in "xyzw"[:_count]])
        VECTOR_TYPES[f"{_base}{_count}"] = _vector
        _CTYPES.setdefault(_vector, f"{_base}{_count}")
        _DTYPES[f"{_base}{_count}"] = _vector


def dtype_to_ctype(dtype) -> str:
    """The C type of a NumPy dtype (``float32`` → ``float``)."""
    found = _CTYPES.get(np.dtype(dtype))
    if found is None:
        raise ValueError(f"no C type for the dtype {np.dtype(dtype)}")
    return found


def ctype_to_dtype(ctype: str) -> np.dtype:
    words = " ".join(ctype.replace("const", " ").replace("volatile", " ").split())
    found = _DTYPES.get(words)
    if found is None:
        raise ValueError(f"no NumPy type for the C type {ctype!r}")
    return np.dtype(found)


def context_dependent_memoize(function):
    """PyCUDA's cache of a function's results per CUDA context: the emulator has one context,
    so a result per arguments."""
    return functools.lru_cache(maxsize=None)(function)


@dataclass(frozen=True)
class VectorArg:
    """An array argument (``float *x``) of a generated kernel."""

    dtype: np.dtype
    name: str

    #: Its character in a ``prepare`` format: a pointer.
    struct_char = "P"

    def __post_init__(self) -> None:
        # PyCUDA's callers pass NumPy scalar types (``numpy.float32``) as well as dtypes.
        object.__setattr__(self, "dtype", np.dtype(self.dtype))

    def declarator(self) -> str:
        return f"{dtype_to_ctype(self.dtype)} *{self.name}"


@dataclass(frozen=True)
class ScalarArg:
    """A by-value argument (``float a``) of a generated kernel."""

    dtype: np.dtype
    name: str

    def __post_init__(self) -> None:
        object.__setattr__(self, "dtype", np.dtype(self.dtype))

    @property
    def struct_char(self) -> str:
        """Its character in a ``prepare`` format, as PyCUDA gives it (a struct's bytes as ``Ns``)."""
        char = self.dtype.char
        return f"{self.dtype.itemsize}s" if char == "V" else char

    def declarator(self) -> str:
        return f"{dtype_to_ctype(self.dtype)} {self.name}"


def parse_c_arg(text: str):
    """``"float *x"`` → ``VectorArg(float32, "x")``; ``"unsigned int n"`` → ``ScalarArg``."""
    text = text.replace("__restrict__", " ").replace("__restrict", " ").strip()
    if not text:
        raise ValueError("an empty argument in a kernel's argument list")
    pointer = "*" in text or text.endswith("[]")
    cleaned = text.replace("*", " ").replace("[]", " ").split()
    if len(cleaned) < 2:
        raise ValueError(f"argument {text!r} needs a type and a name")
    name = cleaned[-1]
    dtype = ctype_to_dtype(" ".join(cleaned[:-1]))
    return VectorArg(dtype, name) if pointer else ScalarArg(dtype, name)


def parse_arguments(arguments):
    """An argument list as a C string (``"float *x, float a"``) or a list of ``VectorArg`` and
    ``ScalarArg``."""
    if isinstance(arguments, str):
        return [parse_c_arg(part) for part in arguments.split(",")]
    parsed = []
    for argument in arguments:
        parsed.append(parse_c_arg(argument) if isinstance(argument, str) else argument)
    return parsed


class DeviceMemoryPool:
    """``pycuda.tools.DeviceMemoryPool``: ``allocate(nbytes)`` hands out device memory and the
    pool counts what is in use. The emulator keeps no freed blocks for reuse (a block goes back
    when its last user drops it), so ``held_blocks`` stays 0; what a program sees of a pooled
    block, memory nothing has written since it was handed out, is the same."""

    def __init__(self, allocator=None):
        from .driver import mem_alloc

        self._allocator = allocator or mem_alloc
        self._active = weakref.WeakSet()

    def allocate(self, nbytes: int):
        block = self._allocator(int(nbytes))
        self._active.add(block)
        return block

    __call__ = allocate

    @property
    def active_blocks(self) -> int:
        return len(self._active)

    @property
    def active_bytes(self) -> int:
        return sum(int(getattr(block, "nbytes", 0)) for block in self._active)

    managed_bytes = active_bytes
    held_blocks = 0

    def free_held(self) -> None:
        """Nothing is held for reuse on the emulator."""

    def stop_holding(self) -> None:
        pass


class PageLockedMemoryPool:
    """``pycuda.tools.PageLockedMemoryPool``: ``allocate(shape, dtype)`` gives a host array, as
    ``pagelocked_empty`` does (page-locking changes only how fast copies go)."""

    def __init__(self, allocator=None):
        self._active = 0

    def allocate(self, shape, dtype, order: str = "C"):
        array = np.empty(shape, dtype=dtype, order=order)
        self._active += 1
        weakref.finalize(array, self._release)
        return array

    def _release(self) -> None:
        self._active -= 1

    @property
    def active_blocks(self) -> int:
        return self._active

    held_blocks = 0

    def free_held(self) -> None:
        """Nothing is held for reuse."""

    def stop_holding(self) -> None:
        pass
