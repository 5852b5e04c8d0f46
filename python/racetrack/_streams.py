"""Streams of the PyCUDA and CuPy faces, ordered as CUDA orders them (the Numba face has its own,
per device, in ``racetrack/cuda/_streams.py``).

Every copy, memset and launch on a stream is queued there: the emulator runs it when it is
queued, and checks it against the work of other streams that nothing orders before it (a stream
order, an event wait, a host synchronization). What no order covers is a race between streams
(``RaceError``, kind ``stream-race``), reported at the ``.py`` lines of both operations.

Work on no stream goes on CUDA's legacy default stream: it starts after everything queued on
the blocking streams (``Stream()``, ``Stream(non_blocking=False)``, PyCUDA's ``Stream(flags=0)``),
and their later work starts after it. A synchronous copy (``memcpy_htod``, ``a.get()``,
``a.set(host)``) is such work, and the host then waits for it. Streams made non-blocking
(``Stream(non_blocking=True)``, ``Stream(flags=1)``) are not waited for, so their work can race
with a synchronous copy, as on a GPU."""

from __future__ import annotations

from typing import Callable, List, Optional

import numpy as np

from . import _core
from ._core import device


class _Registry:
    """The streams made so far, and the hidden stream the legacy default stream's work goes on."""

    def __init__(self) -> None:
        self.blocking: List[int] = []
        self.non_blocking: List[int] = []
        self.legacy: Optional[int] = None


_made = _Registry()


def create_stream(non_blocking: bool = False) -> int:
    """A new stream of the emulator (on the current device); returns its number."""
    stream_id = device().create_stream()
    (_made.non_blocking if non_blocking else _made.blocking).append(stream_id)
    return stream_id


def legacy_stream() -> int:
    """The legacy default stream, after waiting for every blocking stream's work so far: what
    a copy or event on no stream is queued on."""
    emulator = device()
    if _made.legacy is None:
        _made.legacy = emulator.create_stream()
    for stream_id in _made.blocking:
        emulator.wait_event(_made.legacy, emulator.record_event(stream_id))
    return _made.legacy


def after_legacy_work(legacy: int) -> None:
    """Later work on the blocking streams starts after what was just queued on the legacy
    default stream."""
    emulator = device()
    event = emulator.record_event(legacy)
    for stream_id in _made.blocking:
        emulator.wait_event(stream_id, event)


def stream_or_legacy(stream_id: Optional[int]) -> int:
    return legacy_stream() if stream_id is None else stream_id


def synchronize_stream(stream_id: Optional[int]) -> None:
    """The host waits for ``stream_id``'s work (``None``: the legacy default stream's)."""
    if stream_id is None:
        synchronize_all()
    else:
        device().synchronize_stream(stream_id)


def synchronize_all() -> None:
    """The host waits for every stream (``cudaDeviceSynchronize``); work held behind waits that
    found something when it ran is reported now."""
    findings = device().synchronize()
    if findings:
        _core.report_findings(findings, "synchronize")


def _host_waits_for_every_stream() -> bool:
    """With no non-blocking stream, a synchronous copy waits for every stream and the host waits
    for it: nothing can race with it, so it is done directly (a staged copy on the legacy default
    stream costs about ten times as much). Returns whether that is the case, after the wait."""
    if _made.non_blocking:
        return False
    emulator = device()
    for stream_id in _made.blocking + ([_made.legacy] if _made.legacy is not None else []):
        emulator.synchronize_stream(stream_id)
    return True


#: Where the user's call is (``file.py:15``), asked only when a copy is queued on a stream: finding
#: the user's frame costs more than a small synchronous copy itself.
Where = Callable[[], str]


def copy_to_device(address: int, data: np.ndarray, stream_id: Optional[int], where: Where) -> None:
    """Host → device: on ``stream_id`` when given (``cudaMemcpyAsync``), else on the legacy default
    stream with the host waiting for it (``cudaMemcpy``)."""
    if stream_id is not None:
        _core.copy_from_host_on(stream_id, address, data, where=where())
        return
    if _host_waits_for_every_stream():
        if len(data):
            device().write(address, data)
        return
    legacy = legacy_stream()
    _core.copy_from_host_on(legacy, address, data, where=where())
    device().synchronize_stream(legacy)


def copy_to_host(address: int, out: np.ndarray, stream_id: Optional[int], where: Where) -> None:
    """Device → host, into the 1-D ``uint8`` view ``out``, ordered as :func:`copy_to_device`."""
    if stream_id is not None:
        _core.copy_to_host_on(stream_id, address, out, where=where())
        return
    if _host_waits_for_every_stream():
        if len(out):
            device().read_into(address, out)
        return
    legacy = legacy_stream()
    _core.copy_to_host_on(legacy, address, out, where=where())
    device().synchronize_stream(legacy)


def copy_on_device(destination: int, source: int, nbytes: int, stream_id: Optional[int], where: Where) -> None:
    """Device → device, on ``stream_id`` or the legacy default stream (the host does not wait)."""
    if not nbytes:
        return
    if stream_id is None and _host_waits_for_every_stream():
        device().copy(destination, source, nbytes)
        return
    stream = stream_or_legacy(stream_id)
    label = f"the copy at {where()}"
    racecheck = _core._current.get().options.racecheck
    findings = device().copy_on(stream, destination, source, nbytes, racecheck=racecheck, label=label)
    if stream_id is None:
        after_legacy_work(stream)
    if findings:
        _core.report_findings(findings, label)


def native(stream) -> Optional[int]:
    """The emulator's number for a face's stream object (``None``: none given, or the null
    stream, which is the legacy default stream)."""
    return None if stream is None else getattr(stream, "_racetrack_stream", None)
