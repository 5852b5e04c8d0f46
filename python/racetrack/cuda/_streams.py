"""Streams and events. The emulator runs each launch and copy to its end when it is issued, so
work on every stream is already complete when the host could next look; events read the
emulator's clock (``racetrack.device().clock_ms``: the time it has spent running kernels), so
``event_elapsed_time`` measures the emulator's own work between two records."""

from __future__ import annotations

import contextlib

from .._core import device


class Stream:
    """``cuda.stream()``: accepted wherever Numba takes a stream; work is done when issued."""

    def __init__(self, name: str = "stream"):
        self.name = name

    def __repr__(self) -> str:
        return f"<racetrack {self.name}>"

    def synchronize(self) -> None:
        """Every launch and copy on the emulator has already finished."""

    @contextlib.contextmanager
    def auto_synchronize(self):
        yield self
        self.synchronize()

    def add_callback(self, callback, arg=None) -> None:
        callback(self, None, arg)


class Event:
    """``cuda.event()``: records the emulator's clock."""

    def __init__(self, timing: bool = True):
        self.timing = timing
        self._clock_ms = None

    def record(self, stream=0) -> None:
        self._clock_ms = device().clock_ms

    def synchronize(self) -> None:
        """Recorded work is finished when it is issued on the emulator."""

    def wait(self, stream=0) -> None:
        """A stream waiting for this event: already satisfied."""

    def query(self) -> bool:
        return True

    def elapsed_time(self, end: "Event") -> float:
        return event_elapsed_time(self, end)


def event_elapsed_time(start: Event, end: Event) -> float:
    """Milliseconds of the emulator's clock between two recorded events."""
    if start._clock_ms is None or end._clock_ms is None:
        raise ValueError("both events must be recorded before their elapsed time is asked")
    if not (start.timing and end.timing):
        raise ValueError("events made with timing=False have no elapsed time")
    return end._clock_ms - start._clock_ms


_DEFAULT = Stream("default stream")


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
