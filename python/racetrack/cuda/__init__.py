"""``from racetrack import cuda``: a stand-in for ``from numba import cuda`` that runs kernels on
Racetrack's PTX emulator, with its checkers.

Numba compiles each ``@cuda.jit`` kernel to PTX with line info (no GPU needed); the emulator
runs it; a race, a barrier not every thread reaches, or an access out of bounds raises
``racetrack.RaceError``, ``racetrack.SyncError`` or ``racetrack.MemoryAccessError`` naming your
``.py`` line. Moving to a real GPU is the import line alone: ``from numba import cuda``.
"""

from __future__ import annotations

import contextlib

# First: where Numba's CUDA compiler cannot be (Python 3.9, or numba-cuda not installed), this
# raises the one ImportError that says so, before anything of Numba's is imported.
from . import _requires  # noqa: F401

import numba.cuda as _numba_cuda
import numpy as np

# What kernels call on the device is Numba's own: kernels are typed by Numba against these
# very objects (see _compile.py), so they can be imported from here or from numba.cuda.
from numba.cuda import (  # noqa: F401
    activemask,
    all_sync,
    any_sync,
    atomic,
    ballot_sync,
    blockDim,
    blockIdx,
    brev,
    cbrt,
    cg,
    clz,
    const,
    eq_sync,
    ffs,
    fma,
    grid,
    gridDim,
    gridsize,
    laneid,
    lanemask_lt,
    local,
    match_all_sync,
    match_any_sync,
    popc,
    selp,
    shared,
    shfl_down_sync,
    shfl_sync,
    shfl_up_sync,
    shfl_xor_sync,
    syncthreads,
    syncthreads_and,
    syncthreads_count,
    syncthreads_or,
    syncwarp,
    threadfence,
    threadfence_block,
    threadfence_system,
    threadIdx,
    warpsize,
)

from ._arrays import (  # noqa: F401  (re-exported: the face)
    DeviceNDArray,
    ManagedNDArray,
    MappedNDArray,
    as_cuda_array,
    device_array,
    device_array_like,
    is_cuda_array,
    managed_array,
    mapped_array,
    mapped_array_like,
    to_device,
)
from ._arrays import mapped_device_array as _mapped_device_array, unmap as _unmap
from ._compile import COMPUTE_CAPABILITY, DeviceFunction
from ._ffi import declare_device  # noqa: F401  (re-exported: the face)
from ._kernel import Kernel, UnsupportedOnTheEmulator  # noqa: F401
from . import random  # noqa: F401  (racetrack.cuda.random, as numba.cuda.random)
from ._reduce import Reduce
from ._vectorize import guvectorize, vectorize  # noqa: F401  (re-exported: the face)
from ._devices import (  # noqa: F401  (re-exported: the face)
    Context,
    Device,
    current_context,
    current_device_id,
    detect,
    get_current_device,
    gpus,
    list_devices,
    select_device,
)
from ._streams import (  # noqa: F401  (re-exported: the face)
    Event,
    Stream,
    default_stream,
    event,
    event_elapsed_time,
    legacy_default_stream,
    per_thread_default_stream,
    stream,
    synchronize_device,
)

reduce = Reduce

# More of Numba's own objects, as they are: code to link, the copy hints a launch unwraps
# (`cuda.In(a)`), settings, and what kernels call.
from numba.cuda import (  # noqa: E402,F401
    LTOIR,
    Archive,
    Cubin,
    CUSource,
    Dim3,
    Fatbin,
    GridGroup,
    In,
    InOut,
    KernelRuntimeError,
    LinkableCode,
    Object,
    Out,
    PTXSource,
    compile,
    compile_all,
    config,
    ldca,
    ldcg,
    ldcs,
    ldcv,
    ldlu,
    libdevice,
    literal_unroll,
    stcg,
    stcs,
    stwb,
    stwt,
)
from numba.cuda.cudadrv.error import CudaSupportError  # noqa: E402,F401
from numba.cuda.stubs import Stub as _Stub  # noqa: E402

# Every device-side stub Numba has (`cuda.nanosleep`, `cuda.ldcg`, the vector types
# `cuda.float32x4`…): kernels are typed by Numba against these objects and run on the emulator.
for _name, _value in vars(_numba_cuda).items():
    if isinstance(_value, type) and issubclass(_value, _Stub) and not _name.startswith("_"):
        globals().setdefault(_name, _value)

# Numba's scalar types, as `from numba.cuda import float32` finds them: Numba's own objects, so
# `cuda.shared.array(n, float32)` compiles the same from either import.
from numba.cuda import types as _numba_types  # noqa: E402

from . import types  # noqa: E402,F401 (racetrack.cuda.types, as numba.cuda.types)

for _name in _numba_types.__all__:
    _value = getattr(_numba_types, _name, None)
    if isinstance(_value, _numba_types.Type) and _name not in globals():
        globals()[_name] = _value
compile_ptx = _numba_cuda.compile_ptx
implementation = "Racetrack"


def jit(func_or_sig=None, device: bool = False, **options):
    """``@cuda.jit``, ``@cuda.jit(device=True)``, ``@cuda.jit("void(float32[:])")``, with Numba's
    options (``fastmath``, ``opt``, ``debug``, ``lineinfo`` — line info is always on — and a
    kernel's ``link``: CUDA C or PTX files linked in, see ``_ffi.py``)."""
    options = {
        key: value for key, value in options.items() if key in ("fastmath", "opt", "inline", "forceinline", "link")
    }

    def decorate(func, signatures=None):
        if device:
            return DeviceFunction(func, options)
        return Kernel(func, signatures, options)

    if func_or_sig is None:
        return decorate
    if callable(func_or_sig):
        return decorate(func_or_sig)
    signatures = func_or_sig if isinstance(func_or_sig, list) else [func_or_sig]
    if device:
        return lambda func: decorate(func)
    return lambda func: decorate(func, signatures)


def synchronize() -> None:
    """The host waits for everything queued on the current device (``cuCtxSynchronize``, as
    Numba's): every stream of it is then ordered before what the host queues next."""
    synchronize_device(current_device_id())


def compile_for_current_device(pyfunc, sig, **options):
    """Numba's ``compile`` for the capability this face compiles kernels for."""
    return compile(pyfunc, sig, cc=COMPUTE_CAPABILITY, **options)


def compile_ptx_for_current_device(pyfunc, sig, **options):
    """Numba's ``compile_ptx`` for the capability this face compiles kernels for."""
    return compile_ptx(pyfunc, sig, cc=COMPUTE_CAPABILITY, **options)


def is_float16_supported() -> bool:
    """The emulator computes half precision as an H100 does."""
    return True


def is_bfloat16_supported() -> bool:
    return True


def profile_start() -> None:
    """A profiler's range: nothing to do on the emulator."""


def profile_stop() -> None:
    pass


def is_available() -> bool:
    """The emulator is always there."""
    return True


def is_supported_version() -> bool:
    return True


def close() -> None:
    pass


@contextlib.contextmanager
def pinned(*arrays):
    """Page-locking changes only how fast copies go; the emulator's copies are what they are."""
    yield


@contextlib.contextmanager
def mapped(*arrays, stream=0):  # noqa: F811  (Numba's keyword, shadowing cuda.stream here only)
    """``with cuda.mapped(a, b) as (d_a, d_b):`` device arrays over the host arrays' own memory:
    what a kernel writes through them is in ``a`` and ``b`` after the launch."""
    device_arrays = [_mapped_device_array(np.asarray(a), f"mapped_{i}") for i, a in enumerate(arrays)]
    try:
        yield device_arrays[0] if len(device_arrays) == 1 else device_arrays
    finally:
        for device_array_ in device_arrays:
            _unmap(device_array_)


@contextlib.contextmanager
def defer_cleanup():
    yield


def pinned_array(shape, dtype=np.float64, strides=None, order="C"):
    """Page-locked host memory is host memory: a NumPy array."""
    return np.empty(shape, dtype=dtype, order=order)


def pinned_array_like(ary):
    return np.empty_like(ary)


def __getattr__(name: str):
    """A name ``numba.cuda`` has and this face does not (``cuda.declare_device``, say) raises
    NotImplementedError naming it, not an AttributeError that reads like a typo: the program
    is right for Numba, and Racetrack lacks the call."""
    if not name.startswith("_") and name in dir(_numba_cuda):
        raise NotImplementedError(
            f"racetrack.cuda.{name} is not implemented: numba.cuda.{name} has no stand-in on "
            "Racetrack's emulator yet"
        )
    raise AttributeError(f"module 'racetrack.cuda' has no attribute {name!r}")
