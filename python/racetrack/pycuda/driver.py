"""``racetrack.pycuda.driver``: PyCUDA's driver API over the emulator: memory
(``mem_alloc``, ``memcpy_htod``, ``memcpy_dtoh``), argument wrappers (``In``, ``Out``, ``InOut``),
contexts, streams and events, and ``Function``, what ``SourceModule.get_function`` returns.

The emulator runs each launch and copy to its end when it is issued, so synchronizing is
always already done; events read the emulator's clock (the milliseconds it has spent running
kernels), so ``end.time_since(start)`` measures the emulator's own work between two records.
"""

from __future__ import annotations

import builtins
import struct
from typing import List, Optional, Tuple

import numpy as np

from .. import _core, _cuda_c, _streams
from . import _prepared
from .._core import device
from .._device_array import Allocation, DeviceArray, bytes_view


class Error(Exception):
    """PyCUDA's base error."""


class LogicError(Error):
    """A call the driver refuses (a symbol or function that is not there, a bad argument)."""


class MemoryError(Error, builtins.MemoryError):  # noqa: A001 (PyCUDA's name)
    """An allocation the device has no room for (``cuMemAlloc failed: out of memory``): on the
    emulator, one this machine cannot hold, since the device's memory is kept in the host's."""


class CompileError(Error, _core.CompileError):
    """What ``SourceModule`` raises for a source the compiler refuses, as PyCUDA's: ``msg``,
    ``command_line``, ``stdout``, ``stderr`` (NVRTC's log, ``kernel.py(12): error: …``). It is
    also a ``racetrack.CompileError``."""

    def __init__(self, msg: str, command_line: str, stdout: Optional[str] = None, stderr: Optional[str] = None):
        self.msg = msg
        self.command_line = command_line
        self.stdout = stdout
        self.stderr = stderr
        text = msg + f"\n[command: {command_line}]"
        if stdout:
            text += f"\n[stdout:\n{stdout}]"
        if stderr:
            text += f"\n[stderr:\n{stderr}]"
        super().__init__(text)


def compile_error(log: str, program: "_cuda_c.Program") -> CompileError:
    """PyCUDA's ``CompileError`` for NVRTC's ``log`` of ``program``."""
    return CompileError(f"nvrtc compilation of {program.name} failed", f"nvrtc {program.name}", stderr=log)


def init(flags: int = 0) -> None:
    """Nothing to set up: the emulator starts on first use."""


class device_attribute:  # noqa: N801 (PyCUDA's name)
    """The attributes ``Device.get_attribute`` answers (CUDA's ``CU_DEVICE_ATTRIBUTE_*``)."""

    MAX_THREADS_PER_BLOCK = 1
    MAX_BLOCK_DIM_X = 2
    MAX_BLOCK_DIM_Y = 3
    MAX_BLOCK_DIM_Z = 4
    MAX_GRID_DIM_X = 5
    MAX_GRID_DIM_Y = 6
    MAX_GRID_DIM_Z = 7
    MAX_SHARED_MEMORY_PER_BLOCK = 8
    TOTAL_CONSTANT_MEMORY = 9
    WARP_SIZE = 10
    MAX_REGISTERS_PER_BLOCK = 12
    MULTIPROCESSOR_COUNT = 16
    CONCURRENT_KERNELS = 31
    COMPUTE_CAPABILITY_MAJOR = 75
    COMPUTE_CAPABILITY_MINOR = 76
    MAX_THREADS_PER_MULTIPROCESSOR = 39
    ASYNC_ENGINE_COUNT = 40
    UNIFIED_ADDRESSING = 41


_ATTRIBUTE_VALUES = {
    device_attribute.MAX_THREADS_PER_BLOCK: 1024,
    device_attribute.MAX_BLOCK_DIM_X: 1024,
    device_attribute.MAX_BLOCK_DIM_Y: 1024,
    device_attribute.MAX_BLOCK_DIM_Z: 64,
    device_attribute.MAX_GRID_DIM_X: 2**31 - 1,
    device_attribute.MAX_GRID_DIM_Y: 65535,
    device_attribute.MAX_GRID_DIM_Z: 65535,
    device_attribute.MAX_SHARED_MEMORY_PER_BLOCK: 48 * 1024,
    device_attribute.TOTAL_CONSTANT_MEMORY: 64 * 1024,
    device_attribute.WARP_SIZE: 32,
    device_attribute.MAX_REGISTERS_PER_BLOCK: 65536,
    device_attribute.MULTIPROCESSOR_COUNT: 132,
    device_attribute.CONCURRENT_KERNELS: 1,
    device_attribute.COMPUTE_CAPABILITY_MAJOR: 9,
    device_attribute.COMPUTE_CAPABILITY_MINOR: 0,
    device_attribute.MAX_THREADS_PER_MULTIPROCESSOR: 2048,
    device_attribute.ASYNC_ENGINE_COUNT: 2,
    device_attribute.UNIFIED_ADDRESSING: 1,
}


def get_version() -> Tuple[int, int, int]:
    """The CUDA version PyCUDA was built for: the NVRTC Racetrack compiles with (13.0)."""
    return (13, 0, 0)


def get_driver_version() -> int:
    return 13000


class Device:
    """The emulated device (there is one: ``Device(0)``)."""

    def __init__(self, number: int = 0):
        if int(number) != 0:
            raise LogicError(f"there is one emulated device (Device(0)), not Device({number})")
        self.number = 0

    @staticmethod
    def count() -> int:
        return 1

    def name(self) -> str:
        return "Racetrack PTX emulator"

    def compute_capability(self) -> Tuple[int, int]:
        return (9, 0)

    def total_memory(self) -> int:
        return 80 * 1024**3

    def get_attribute(self, attribute: int) -> int:
        """One of ``device_attribute``'s values, as an H100 (SXM) gives it: the emulator runs
        kernels as that GPU would, with its limits."""
        found = _ATTRIBUTE_VALUES.get(attribute)
        if found is None:
            raise NotImplementedError(f"Device.get_attribute({attribute!r}) is not implemented in racetrack's PyCUDA face")
        return found

    def get_attributes(self) -> dict:
        return {name: _ATTRIBUTE_VALUES[value] for name, value in vars(device_attribute).items() if not name.startswith("_")}

    def make_context(self, flags: int = 0) -> "Context":
        return Context(self)

    def __eq__(self, other) -> bool:
        return isinstance(other, Device)

    def __hash__(self) -> int:
        return 0


class limit:  # noqa: N801 (PyCUDA's name)
    """``CUlimit``: what ``Context.set_limit`` and ``get_limit`` take."""

    STACK_SIZE = 0
    PRINTF_FIFO_SIZE = 1
    MALLOC_HEAP_SIZE = 2
    DEV_RUNTIME_SYNC_DEPTH = 3
    DEV_RUNTIME_PENDING_LAUNCH_COUNT = 4
    MAX_L2_FETCH_GRANULARITY = 5
    PERSISTING_L2_CACHE_SIZE = 6


#: An H100's defaults under CUDA 13 (``cuCtxGetLimit`` on a fresh context).
_LIMIT_DEFAULTS = {
    limit.STACK_SIZE: 1024,
    limit.PRINTF_FIFO_SIZE: 1 << 20,
    limit.MALLOC_HEAP_SIZE: 8 << 20,
    limit.DEV_RUNTIME_SYNC_DEPTH: 2,
    limit.DEV_RUNTIME_PENDING_LAUNCH_COUNT: 2048,
    limit.MAX_L2_FETCH_GRANULARITY: 64,
    limit.PERSISTING_L2_CACHE_SIZE: 0,
}
_limits: dict = {}


class Context:
    """The one context; every call on it is already done when it returns."""

    def __init__(self, dev: Optional[Device] = None):
        self.device = dev or Device(0)

    @staticmethod
    def synchronize() -> None:
        """The host waits for every stream's work (``cuCtxSynchronize``)."""
        _streams.synchronize_all()

    @staticmethod
    def get_device() -> Device:
        return Device(0)

    @staticmethod
    def set_limit(which: int, value: int) -> None:
        """``cuCtxSetLimit``: kept for ``get_limit``. The emulator's device printf buffer,
        stacks and heap are as large as the program needs, so no limit changes a run."""
        if which not in _LIMIT_DEFAULTS:
            raise LogicError(f"cuCtxSetLimit failed: invalid argument (no limit {which!r})")
        if int(value) < 0:
            raise LogicError("cuCtxSetLimit failed: invalid argument (a negative value)")
        _limits[which] = int(value)

    @staticmethod
    def get_limit(which: int) -> int:
        """``cuCtxGetLimit``: what ``set_limit`` set, else an H100's default."""
        if which not in _LIMIT_DEFAULTS:
            raise LogicError(f"cuCtxGetLimit failed: invalid argument (no limit {which!r})")
        return _limits.get(which, _LIMIT_DEFAULTS[which])

    def push(self) -> None:
        pass

    def pop(self) -> None:
        pass

    def detach(self) -> None:
        pass


# -- memory ----------------------------------------------------------------------------------


class DeviceAllocation:
    """``mem_alloc``'s result: ``int(allocation)`` is its device address."""

    def __init__(
        self, nbytes: int, label: str = "", *, uninit: bool = True, owner=None, address: Optional[int] = None
    ):
        if address is None:
            try:
                self._allocation: Optional[Allocation] = Allocation(nbytes, label, uninit=uninit)
            except builtins.MemoryError as error:
                raise MemoryError(f"cuMemAlloc failed: out of memory ({error})") from None
            self._address = self._allocation.address
        else:  # a view of memory someone else owns (a module's global, a GPUArray's buffer)
            self._allocation = None
            self._address = int(address)
        self._owner = owner
        self.nbytes = int(nbytes)

    @property
    def owns_start(self) -> bool:
        """Whether this is the start of an allocation of its own (``mem_alloc``'s)."""
        return self._allocation is not None

    def __int__(self) -> int:
        return self._address

    __index__ = __int__

    def __add__(self, offset: int) -> int:
        return self._address + int(offset)

    __radd__ = __add__

    def __repr__(self) -> str:
        return f"<racetrack DeviceAllocation {self.nbytes} bytes at {self._address:#x}>"

    def free(self) -> None:
        if self._allocation is not None:
            self._allocation.free()

    def relabel(self, label: str) -> None:
        """Names the buffer in reports (``hist[65]``)."""
        device().relabel(self._address, label)


def mem_alloc(nbytes: int) -> DeviceAllocation:
    """Uninitialized device memory, as ``cudaMalloc`` gives (initcheck reports reads of bytes
    nothing wrote)."""
    return DeviceAllocation(int(nbytes))


def mem_alloc_like(ary: np.ndarray) -> DeviceAllocation:
    return DeviceAllocation(np.asarray(ary).nbytes)


def mem_get_info() -> Tuple[int, int]:
    total = Device(0).total_memory()
    return (total, total)


def _address(dest) -> int:
    if hasattr(dest, "gpudata"):
        return int(dest.gpudata)
    return int(dest)


def _host_bytes(src) -> np.ndarray:
    array = np.asarray(src)
    if not array.flags.c_contiguous:
        raise ValueError("host memory for a copy must be C-contiguous (np.ascontiguousarray)")
    return array.reshape(-1).view(np.uint8)


def _stream_id(stream) -> Optional[int]:
    if stream is not None and not isinstance(stream, Stream):
        raise TypeError(f"a stream is a drv.Stream or None, not {type(stream).__name__}")
    return _streams.native(stream)


@_cuda_c.user_facing
def memcpy_htod(dest, src) -> None:
    """Host (a NumPy array or buffer) → device, on the legacy default stream; the host waits."""
    _streams.copy_to_device(_address(dest), _host_bytes(src), None, _cuda_c.where)


def _host_out(dest: np.ndarray, what: str) -> np.ndarray:
    if not dest.flags.c_contiguous or not dest.flags.writeable:
        raise ValueError(f"{what} needs a writeable, C-contiguous NumPy array")
    return dest.reshape(-1).view(np.uint8)


@_cuda_c.user_facing
def memcpy_dtoh(dest: np.ndarray, src) -> None:
    """Device → host, into the C-contiguous NumPy array ``dest``; the host waits."""
    _streams.copy_to_host(_address(src), _host_out(dest, "memcpy_dtoh"), None, _cuda_c.where)


@_cuda_c.user_facing
def memcpy_dtod(dest, src, size: int) -> None:
    _streams.copy_on_device(_address(dest), _address(src), int(size), None, _cuda_c.where)


@_cuda_c.user_facing
def memcpy_htod_async(dest, src, stream=None) -> None:
    """Host → device queued on ``stream``: ordered after its work, checked against the rest."""
    _streams.copy_to_device(_address(dest), _host_bytes(src), _stream_id(stream), _cuda_c.where)


@_cuda_c.user_facing
def memcpy_dtoh_async(dest, src, stream=None) -> None:
    """Device → host queued on ``stream`` (here the bytes are there when it returns)."""
    out = _host_out(dest, "memcpy_dtoh_async")
    _streams.copy_to_host(_address(src), out, _stream_id(stream), _cuda_c.where)


@_cuda_c.user_facing
def memcpy_dtod_async(dest, src, size: int, stream=None) -> None:
    _streams.copy_on_device(_address(dest), _address(src), int(size), _stream_id(stream), _cuda_c.where)


def _memset(dest, value, count: int, dtype, stream=None) -> None:
    """A memset is a copy from the host here: it queues and is checked as one."""
    fill = np.full(int(count), value, dtype=dtype)
    if fill.nbytes:
        _streams.copy_to_device(_address(dest), bytes_view(fill), _stream_id(stream), _cuda_c.where)


def memset_d8(dest, data: int, count: int) -> None:
    _memset(dest, np.uint8(data), count, np.uint8)


def memset_d16(dest, data: int, count: int) -> None:
    _memset(dest, np.uint16(data), count, np.uint16)


def memset_d32(dest, data: int, count: int) -> None:
    _memset(dest, np.uint32(data), count, np.uint32)


def memset_d8_async(dest, data: int, count: int, stream=None) -> None:
    _memset(dest, np.uint8(data), count, np.uint8, stream)


def memset_d16_async(dest, data: int, count: int, stream=None) -> None:
    _memset(dest, np.uint16(data), count, np.uint16, stream)


def memset_d32_async(dest, data: int, count: int, stream=None) -> None:
    _memset(dest, np.uint32(data), count, np.uint32, stream)


def to_device(buffer) -> DeviceAllocation:
    """A new allocation holding a copy of ``buffer``."""
    data = _host_bytes(buffer)
    allocation = DeviceAllocation(data.size)
    memcpy_htod(allocation, data)
    return allocation


def from_device(devptr, shape, dtype, order: str = "C") -> np.ndarray:
    result = np.empty(shape, dtype=dtype, order=order)
    memcpy_dtoh(result, devptr)
    return result


def from_device_like(devptr, other: np.ndarray) -> np.ndarray:
    return from_device(devptr, other.shape, other.dtype)


def pagelocked_empty(shape, dtype, order: str = "C", mem_flags: int = 0) -> np.ndarray:
    return np.empty(shape, dtype=dtype, order=order)


def pagelocked_zeros(shape, dtype, order: str = "C", mem_flags: int = 0) -> np.ndarray:
    return np.zeros(shape, dtype=dtype, order=order)


def pagelocked_empty_like(array: np.ndarray, mem_flags: int = 0) -> np.ndarray:
    return np.empty_like(array)


# -- argument handlers -----------------------------------------------------------------------


class ArgumentHandler:
    """A host array passed to a kernel: copied to a device buffer before the launch, back
    after it, as the subclass says."""

    copy_in = False
    copy_out = False

    def __init__(self, array: np.ndarray):
        if not isinstance(array, np.ndarray):
            raise TypeError(f"{type(self).__name__} takes a NumPy array, not {type(array).__name__}")
        self.array = array
        self._device: Optional[DeviceAllocation] = None

    def get_device_alloc(self) -> DeviceAllocation:
        if self._device is None:
            # Out(): uninitialized, as the real buffer would be; In/InOut: the host's data.
            self._device = DeviceAllocation(self.array.nbytes)
        return self._device

    def pre_call(self, stream=None) -> None:
        if self.copy_in:
            memcpy_htod(self.get_device_alloc(), np.ascontiguousarray(self.array))

    def post_call(self, stream=None) -> None:
        if self.copy_out:
            if self.array.flags.c_contiguous:
                memcpy_dtoh(self.array, self.get_device_alloc())
            else:
                staging = np.empty_like(self.array, order="C")
                memcpy_dtoh(staging, self.get_device_alloc())
                self.array[...] = staging


class In(ArgumentHandler):
    copy_in = True


class Out(ArgumentHandler):
    copy_out = True


class InOut(ArgumentHandler):
    copy_in = True
    copy_out = True


# -- streams and events ----------------------------------------------------------------------


class stream_flags:  # noqa: N801 (PyCUDA's name)
    DEFAULT = 0
    NON_BLOCKING = 1


class Stream:
    """A stream: copies and launches given it are queued on it, and checked against other
    streams' work that no event or synchronization orders before them (``racetrack/_streams.py``).
    ``Stream(flags=stream_flags.NON_BLOCKING)`` is not waited for by the legacy default stream."""

    def __init__(self, flags: int = 0):
        self.flags = flags
        self._racetrack_stream = _streams.create_stream(non_blocking=bool(flags & stream_flags.NON_BLOCKING))

    def synchronize(self) -> None:
        _streams.synchronize_stream(self._racetrack_stream)

    def is_done(self) -> bool:
        return True

    def wait_for_event(self, event: "Event") -> None:
        """Later work on this stream waits for what ``event`` recorded (``cuStreamWaitEvent``)."""
        if event._id is not None:
            device().wait_event(self._racetrack_stream, event._id)


class Event:
    """Marks a point of a stream (``record``) that other streams can wait for, and reads the
    host's clock (``_core.event_clock_ms``)."""

    def __init__(self, flags: int = 0):
        self.flags = flags
        self._clock_ms: Optional[float] = None
        self._id: Optional[int] = None
        self._stream: Optional[int] = None

    def record(self, stream: Optional[Stream] = None) -> "Event":
        self._stream = _stream_id(stream)
        queued_on = _streams.stream_or_legacy(self._stream)
        self._id = device().record_event(queued_on)
        self._clock_ms = _core.event_clock_ms()
        return self

    def synchronize(self) -> "Event":
        """The host waits for the recorded work."""
        if self._id is not None:
            _streams.synchronize_stream(self._stream)
        return self

    def query(self) -> bool:
        return True

    def time_since(self, event: "Event") -> float:
        """Milliseconds from ``event`` to this one (see ``_core.event_clock_ms``)."""
        if self._clock_ms is None or event._clock_ms is None:
            raise LogicError("both events must be recorded before the time between them is asked")
        return self._clock_ms - event._clock_ms

    def time_till(self, event: "Event") -> float:
        return event.time_since(self)


class event_flags:  # noqa: N801 (PyCUDA's name)
    DEFAULT = 0
    BLOCKING_SYNC = 1
    DISABLE_TIMING = 2
    INTERPROCESS = 4


# -- kernels ---------------------------------------------------------------------------------


def _dim3(value, what: str) -> Tuple[int, int, int]:
    from .._core import dim3

    return dim3(value, what)


class Function:
    """A kernel of a ``SourceModule``: call it with its arguments and ``block=(x, y, z)``,
    ``grid=(x, y)``, ``shared=`` bytes of dynamic shared memory.

    Arguments are what PyCUDA takes: device memory (``mem_alloc``'s result, a ``GPUArray``),
    ``In``/``Out``/``InOut`` around a NumPy array, and NumPy scalars (``np.int32(n)``) for
    by-value parameters. A Python ``int`` or ``float`` is refused, as PyCUDA refuses it, since
    its C type would be a guess; so is a NumPy scalar whose bytes a GPU would misread (a
    ``np.float64`` for a ``float`` parameter), which on a GPU silently computes garbage.

    Prepared calls (``prepare("PfI")``, then ``prepared_call(grid, block, *args)``) fix the
    types once as ``struct`` format characters and take Python numbers, as PyCUDA's do.
    """

    max_threads_per_block = 1024
    num_regs = 0
    shared_size_bytes = 0
    local_size_bytes = 0
    const_size_bytes = 0

    def __init__(self, program: "_cuda_c.Program", name: str):
        self._program = program
        self._kernel = program.kernel(name)
        self.function_name = name
        #: What ``prepare`` made of its argument, as PyCUDA keeps it: a ``struct`` format.
        self.arg_format: Optional[str] = None
        self._prepared: Optional[Tuple[str, List[_prepared.Item]]] = None

    def __repr__(self) -> str:
        return f"<racetrack pycuda Function {self.function_name}>"

    def _marshal(self, args) -> Tuple[list, List[ArgumentHandler]]:
        kernel = self._kernel
        _cuda_c.check_arity(kernel, len(args))
        marshalled, handlers = [], []
        for index, (value, param) in enumerate(zip(args, kernel.params)):
            marshalled.append(
                self._argument(value, param, index, param.describe(index, kernel.name), handlers)
            )
        return marshalled, handlers

    @staticmethod
    def _argument(value, param, index, what, handlers):
        if isinstance(value, ArgumentHandler):
            _cuda_c.check_elements(param, value.array.dtype, what, lambda: value.array)
            handlers.append(value)
            return _cuda_c.pointer(int(value.get_device_alloc()), param, what, allocation_start=True)
        if isinstance(value, DeviceAllocation):
            return _cuda_c.pointer(int(value), param, what, allocation_start=value.owns_start)
        if isinstance(value, (np.generic, np.bool_)):
            return _cuda_c.by_value(np.asarray(value), param, what)
        if isinstance(value, np.ndarray):
            if param.array and value.nbytes >= param.size:
                return _cuda_c.by_value(value, param, what)
            raise TypeError(
                f"{what}: a NumPy array is host memory, which a kernel cannot read; wrap it in "
                "drv.In(a), drv.Out(a) or drv.InOut(a), or copy it with gpuarray.to_gpu(a)"
            )
        if isinstance(value, bool) or isinstance(value, (int, float, complex)):
            raise TypeError(
                f"invalid type on parameter #{index} (0-based): {what} was given a Python "
                f"{type(value).__name__}, and PyCUDA passes only NumPy scalars by value; pass "
                f"{_cuda_c.numpy_hint(param)}({value!r})"
            )
        if isinstance(value, DeviceArray):
            return _cuda_c.pointer(
                value.ptr, param, what, allocation_start=value.starts_allocation, dtype=value.dtype, contents=value.get
            )
        interface = getattr(value, "__cuda_array_interface__", None)
        if interface is not None:
            return _cuda_c.pointer(int(interface["data"][0]), param, what)
        gpudata = getattr(value, "gpudata", None)
        if gpudata is not None:
            return _cuda_c.pointer(int(gpudata), param, what)
        raise TypeError(f"invalid type on parameter #{index} (0-based): {type(value).__name__}")

    def _launch(self, args, block, grid, shared: int, where_text: str, stream=None) -> None:
        # The shape first: a launch refused for it copies nothing in or out.
        grid, block = _dim3(grid, "grid"), _dim3(block, "block")
        marshalled, handlers = self._marshal(args)
        for handler in handlers:
            handler.pre_call()
        try:
            _cuda_c.launch(
                self._kernel,
                grid,
                block,
                marshalled,
                shared_bytes=int(shared),
                where_text=where_text,
                stream=_stream_id(stream),
            )
        finally:
            # As PyCUDA does, Out/InOut arrays get the device's contents back, findings or not.
            for handler in handlers:
                handler.post_call()

    @_cuda_c.user_facing
    def __call__(self, *args, **kwargs):
        """Launches with ``block=`` (required), ``grid=(1, 1)``, ``shared=`` bytes of dynamic
        shared memory and ``stream=``; with ``time_kernel=True`` it returns the launch's
        seconds on the emulator's clock (what ``drv.Event`` measures)."""
        grid = kwargs.pop("grid", (1, 1))
        stream = kwargs.pop("stream", None)
        block = kwargs.pop("block", None)
        shared = kwargs.pop("shared", 0)
        texrefs = kwargs.pop("texrefs", [])
        time_kernel = kwargs.pop("time_kernel", False)
        if kwargs:
            raise ValueError(f"extra keyword arguments: {','.join(kwargs)}")
        if block is None:
            raise ValueError("must specify block size")
        _no_textures(texrefs)
        if time_kernel and stream is not None:
            # PyCUDA asserts the same: an asynchronous launch has not ended when the call returns.
            raise ValueError("can't time the kernel on an asynchronous invocation (stream=...)")
        clock_before = device().clock_ms
        self._launch(args, block, grid, shared, _cuda_c.where(), stream)
        if time_kernel:
            return (device().clock_ms - clock_before) * 1e-3
        return None

    # -- prepared calls: the arguments' types fixed once, as struct format characters --------

    def prepare(self, arg_types, texrefs=()) -> "Function":
        """Fixes the arguments' types: a ``struct`` format such as ``"PfI"`` (``P`` a pointer:
        a ``DeviceAllocation`` or an int address), or a list of NumPy scalar types and dtypes
        (anything else in it is a pointer), as PyCUDA takes them. The format is matched with the
        kernel's parameters now: one that a GPU would misread raises ``TypeError``."""
        _no_textures(texrefs)
        self.arg_format = _prepared.arg_format(arg_types)
        order, items = _prepared.parse(self.arg_format)
        _prepared.check_format(self._kernel, self.arg_format, items)
        self._prepared = (order, items)
        return self

    def _prepared_args(self, call: str, block, args, kwargs) -> Tuple[list, int]:
        """The launch arguments of a prepared call, and its dynamic shared memory."""
        if self._prepared is None:
            raise LogicError(f"{call} of {self.function_name} before prepare(...)")
        if not isinstance(block, tuple):
            # PyCUDA treats a non-tuple here as the first argument of the pre-2011 form, whose
            # block came from set_block_shape (deprecated, and not here).
            raise TypeError(
                f"{call}(grid, block, ...): block must be a tuple such as (128, 1, 1), "
                f"not {type(block).__name__}"
            )
        shared_size = kwargs.pop("shared_size", 0)
        if kwargs:
            raise TypeError(f"unknown keyword arguments: {', '.join(kwargs)}")
        order, items = self._prepared
        if len(args) != len(items):
            raise struct.error(
                f"{self.function_name} was prepared as {self.arg_format!r}, for {len(items)} "
                f"arguments; {len(args)} given"
            )
        launch_args = [
            _prepared.launch_arg(self._kernel, index, order, item, value)
            for index, (item, value) in enumerate(zip(items, args))
        ]
        return launch_args, int(shared_size or 0)

    def _launch_prepared(self, launch_args, block, grid, shared: int, stream=None) -> None:
        _cuda_c.launch(
            self._kernel,
            _dim3(grid, "grid"),
            _dim3(block, "block"),
            launch_args,
            shared_bytes=shared,
            where_text=_cuda_c.where(),
            stream=_stream_id(stream),
        )

    @_cuda_c.user_facing
    def prepared_call(self, grid, block, *args, **kwargs) -> None:
        """Launches with the prepared argument types: ``grid`` (``(x, y)``), ``block``
        (``(x, y, z)``), the arguments, and ``shared_size=`` bytes of dynamic shared memory."""
        launch_args, shared = self._prepared_args("prepared_call", block, args, kwargs)
        self._launch_prepared(launch_args, block, grid, shared)

    @_cuda_c.user_facing
    def prepared_timed_call(self, grid, block, *args, **kwargs):
        """``prepared_call`` between two events; returns a function that gives the launch's
        seconds on the emulator's clock, as PyCUDA's gives the GPU's."""
        launch_args, shared = self._prepared_args("prepared_timed_call", block, args, kwargs)
        start, end = Event(), Event()
        start.record()
        self._launch_prepared(launch_args, block, grid, shared)
        end.record()

        def get_call_time() -> float:
            end.synchronize()
            return end.time_since(start) * 1e-3

        return get_call_time

    @_cuda_c.user_facing
    def prepared_async_call(self, grid, block, stream, *args, **kwargs) -> None:
        """``prepared_call`` queued on ``stream`` (a ``Stream`` or ``None``); the emulator has
        run it to its end when this returns."""
        if stream is not None and not isinstance(stream, Stream):
            raise TypeError(
                f"prepared_async_call(grid, block, stream, ...): stream must be a drv.Stream or "
                f"None, not {type(stream).__name__}"
            )
        launch_args, shared = self._prepared_args("prepared_async_call", block, args, kwargs)
        self._launch_prepared(launch_args, block, grid, shared, stream)


def _no_textures(texrefs) -> None:
    if texrefs:
        raise LogicError("texture references are not emulated (texrefs=...)")
