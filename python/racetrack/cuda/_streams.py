"""Streams and events, per device. The emulator runs each launch and copy to its end when it is
issued, and checks what a GPU would not: that work on one stream which touches memory that work
on another stream touched is ordered after it, by an event the stream waited for
(``event.wait(stream)``, Numba's ``cuStreamWaitEvent``) or by the host synchronizing. Work that
nothing orders is a race between streams, reported at the kernel's line and the ``.py`` lines of
both operations; copies between the host and a device array on a stream (``to_device(a,
stream=s)``, ``copy_to_host(stream=s)``) are such work too (``_core.copy_from_host_on``).

A stream belongs to the device current when it was made, an event to the device current when it
was made; an event is recorded on a stream of its own device, and any device's stream may wait
for it. The default stream is CUDA's legacy one: work on it (launches, copies without a stream)
starts after everything queued before, as the emulator's launches without a stream do.

Events read the host's clock when recorded (``_core.event_clock_ms``): the emulator runs work
when it is queued, so ``event_elapsed_time`` is the emulator's work between two records plus what
the host did meanwhile, as an idle GPU's stream would count it; not a GPU's time."""

from __future__ import annotations

import contextlib
from typing import Dict, List, Optional

from .. import _core
from .._core import device
from ._devices import current_device_id

#: Every stream made so far, by device: what the legacy default stream and
#: ``cuda.synchronize()`` wait for.
_streams_of: Dict[int, List[int]] = {}


def synchronize_device(device_id: int) -> None:
    """The host waits for everything queued on ``device_id``'s streams (``cuCtxSynchronize``)."""
    for stream_id in _streams_of.get(device_id, ()):
        device().synchronize_stream(stream_id)


class Stream:
    """``cuda.stream()``: a stream on the current device."""

    def __init__(self, name: str = "stream", native: bool = True):
        self.name = name
        self.device_id = current_device_id()
        self._id: Optional[int] = None
        if native:
            self._id = device().create_stream()
            _streams_of.setdefault(self.device_id, []).append(self._id)

    def __repr__(self) -> str:
        if self._id is None:
            return f"<racetrack {self.name}>"
        return f"<racetrack stream on device {self.device_id}>"

    def __int__(self) -> int:
        return 0 if self._id is None else self._id + 1

    def synchronize(self) -> None:
        """The host waits for everything queued on this stream."""
        if self._id is None:
            synchronize_device(current_device_id())
        else:
            device().synchronize_stream(self._id)

    @contextlib.contextmanager
    def auto_synchronize(self):
        yield self
        self.synchronize()

    def add_callback(self, callback, arg=None) -> None:
        callback(self, None, arg)


def native_stream(stream) -> Optional[int]:
    """The emulator's number for ``stream`` (``None`` for the default stream, 0 or ``None``), after
    checking that it belongs to the current device, as a launch or copy on it needs."""
    if stream is None or (isinstance(stream, int) and stream == 0):
        return None
    if not isinstance(stream, Stream):
        raise TypeError(f"a stream is a cuda.stream() or 0, not {type(stream).__name__}")
    if stream._id is not None and stream.device_id != current_device_id():
        raise ValueError(
            f"{stream!r} is used while device {current_device_id()} is current: work goes on a "
            f"stream of the current device (make it current with `with cuda.gpus[{stream.device_id}]:`)"
        )
    return stream._id


class Event:
    """``cuda.event()``: an event of the current device."""

    def __init__(self, timing: bool = True):
        self.timing = timing
        self.device_id = current_device_id()
        self._clock_ms = None
        #: The emulator's event for the last record, for streams that wait for it.
        self._id: Optional[int] = None

    def record(self, stream=0) -> None:
        """Marks everything queued so far on ``stream`` (a stream of this event's device)."""
        if self.device_id != current_device_id():
            raise ValueError(
                f"an event of device {self.device_id} is recorded while device {current_device_id()} "
                f"is current: record it on a stream of its own device (inside `with cuda.gpus[{self.device_id}]:`)"
            )
        stream_id = native_stream(stream)
        if stream_id is None:
            # The legacy default stream: everything queued on the device so far.
            stream_id = _default_stream_of(self.device_id)
            for other in _streams_of.get(self.device_id, ()):
                if other != stream_id:
                    device().wait_event(stream_id, device().record_event(other))
        self._id = device().record_event(stream_id)
        self._clock_ms = _core.event_clock_ms()

    def synchronize(self) -> None:
        """The host waits for the recorded work (here: for its stream)."""
        if self._id is not None:
            synchronize_device(self.device_id)

    def wait(self, stream=0) -> None:
        """Work queued on ``stream`` (of any device) from now on waits for the recorded work. An
        event never recorded is no wait at all, as in CUDA."""
        if self._id is None:
            return
        stream_id = native_stream(stream)
        waiting = [stream_id] if stream_id is not None else _streams_of.get(current_device_id(), [])
        for each in waiting:
            device().wait_event(each, self._id)

    def query(self) -> bool:
        return True

    def elapsed_time(self, end: "Event") -> float:
        return event_elapsed_time(self, end)


def event_elapsed_time(start: Event, end: Event) -> float:
    """Milliseconds between two recorded events (see ``_core.event_clock_ms``)."""
    if start._clock_ms is None or end._clock_ms is None:
        raise ValueError("both events must be recorded before their elapsed time is asked")
    if not (start.timing and end.timing):
        raise ValueError("events made with timing=False have no elapsed time")
    return end._clock_ms - start._clock_ms


#: A hidden stream per device on which events "recorded on the default stream" are recorded.
_default_streams: Dict[int, int] = {}


def _default_stream_of(device_id: int) -> int:
    if device_id not in _default_streams:
        _default_streams[device_id] = device().create_stream()
        _streams_of.setdefault(device_id, []).append(_default_streams[device_id])
    return _default_streams[device_id]


_DEFAULT = Stream("default stream", native=False)


def stream() -> Stream:
    return Stream()


def default_stream() -> Stream:
    return _DEFAULT


def legacy_default_stream() -> Stream:
    return _DEFAULT


def per_thread_default_stream() -> Stream:
    return _DEFAULT


def event(timing: bool = True) -> Event:
    return Event(timing)
