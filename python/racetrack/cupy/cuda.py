"""``cupy.cuda`` as far as a raw-kernel tutorial uses it: the device, synchronizing, streams
and events. The emulator runs each launch and copy to its end when it is issued, and orders
them by streams as CUDA does (``racetrack/_streams.py``); events read the emulator's clock
(the milliseconds it has spent running kernels)."""

from __future__ import annotations

import sys
from types import SimpleNamespace
from typing import List, Optional

from .. import _core, _streams
from .._core import device as _device
from . import _compiler as compiler

# ``from cupy.cuda.compiler import CompileException``: this module is not a package, so the
# submodule is found by its name in sys.modules, where the import system looks first.
sys.modules[__name__ + ".compiler"] = compiler


class CUDADriverError(RuntimeError):
    """A call the driver refuses (a symbol that is not there)."""


driver = SimpleNamespace(CUDADriverError=CUDADriverError)


class OutOfMemoryError(MemoryError):
    """``cupy.cuda.memory.OutOfMemoryError``: an allocation the device has no room for (on the
    emulator, one this machine cannot hold)."""


memory = SimpleNamespace(OutOfMemoryError=OutOfMemoryError)


class Device:
    """The emulated device (there is one: ``Device(0)``)."""

    def __init__(self, device: int = 0):
        self.id = int(device)

    def synchronize(self) -> None:
        """The host waits for every stream's work (``cudaDeviceSynchronize``)."""
        _streams.synchronize_all()

    def use(self) -> None:
        pass

    @property
    def compute_capability(self) -> str:
        return "90"

    def __enter__(self) -> "Device":
        return self

    def __exit__(self, *exc) -> None:
        pass


class Stream:
    """A stream: launches inside ``with stream:`` (or after ``stream.use()``) and copies given
    it (``a.set(host, stream=s)``, ``a.get(stream=s)``) are queued on it, and checked against
    other streams' work that no event or synchronization orders before them
    (``racetrack/_streams.py``). ``Stream.null`` is the legacy default stream; a stream made with
    ``non_blocking=True`` is not waited for by it."""

    null: "Stream"

    def __init__(self, null: bool = False, non_blocking: bool = False, ptds: bool = False):
        self.is_null = null
        self.non_blocking = non_blocking
        self._racetrack_stream: Optional[int] = None if null else _streams.create_stream(non_blocking)
        self._previous: List["Stream"] = []

    def synchronize(self) -> None:
        _streams.synchronize_stream(self._racetrack_stream)

    def use(self) -> "Stream":
        """Makes this the current stream."""
        _current[0] = self
        return self

    def __enter__(self) -> "Stream":
        self._previous.append(_current[0])
        _current[0] = self
        return self

    def __exit__(self, *exc) -> None:
        _current[0] = self._previous.pop()

    def record(self, event: Optional["Event"] = None) -> "Event":
        event = event or Event()
        event.record(self)
        return event

    def wait_event(self, event: "Event") -> None:
        """Later work on this stream waits for what ``event`` recorded (``cudaStreamWaitEvent``)."""
        if event._id is not None:
            _device().wait_event(_streams.stream_or_legacy(self._racetrack_stream), event._id)

    @property
    def done(self) -> bool:
        return True


Stream.null = Stream(null=True)
_current: List[Stream] = [Stream.null]


def get_current_stream() -> Stream:
    return _current[0]


class Event:
    """Marks a point of a stream (``record``) that other streams can wait for, and reads the
    host's clock (``_core.event_clock_ms``)."""

    def __init__(self, block: bool = False, disable_timing: bool = False, interprocess: bool = False):
        self.disable_timing = disable_timing
        self._clock_ms: Optional[float] = None
        self._id: Optional[int] = None
        self._stream: Optional[int] = None

    def record(self, stream: Optional[Stream] = None) -> None:
        self._stream = (stream or get_current_stream())._racetrack_stream
        self._id = _device().record_event(_streams.stream_or_legacy(self._stream))
        self._clock_ms = _core.event_clock_ms()

    def synchronize(self) -> None:
        if self._id is not None:
            _streams.synchronize_stream(self._stream)

    @property
    def done(self) -> bool:
        return True


def get_elapsed_time(start_event: Event, end_event: Event) -> float:
    """Milliseconds between two recorded events (see ``_core.event_clock_ms``)."""
    if start_event._clock_ms is None or end_event._clock_ms is None:
        raise RuntimeError("both events must be recorded before the time between them is asked")
    if start_event.disable_timing or end_event.disable_timing:
        raise RuntimeError("events made with disable_timing=True have no elapsed time")
    return end_event._clock_ms - start_event._clock_ms


def _device_synchronize() -> None:
    _streams.synchronize_all()


runtime = SimpleNamespace(deviceSynchronize=_device_synchronize, getDeviceCount=lambda: 1)
