"""What every face shares: the emulated device, the checkers' options, and findings as exceptions.

A face (``racetrack.cuda`` for Numba, ``racetrack.pycuda``, ``racetrack.cupy``) turns its
library's calls into :func:`launch` calls; :func:`launch` runs the kernel on the emulator and,
when a checker objects, raises the :class:`FindingError` subclass for it (or, inside
``racetrack.checking(raise_on_finding=False)``, adds the findings to that block's report).
"""

from __future__ import annotations

import contextlib
import contextvars
import glob
import linecache
import numbers
import os
import re
import sys
import threading
import time
from dataclasses import dataclass, field
from typing import Iterator, List, Optional, Sequence, Tuple

from . import _native


def _find_this_pythons_nvrtc() -> None:
    """Racetrack looks for NVRTC on ``LD_LIBRARY_PATH`` first, then in the site-packages of
    whatever ``python3`` is on ``PATH``, which need not be this interpreter (a virtual
    environment used without activating it). The NVRTC wheel this package depends on is in this
    interpreter's site-packages: put its folder first, so that it is the one found."""
    for entry in sys.path:
        lib = os.path.join(entry, "nvidia", "cu13", "lib")
        if glob.glob(os.path.join(lib, "libnvrtc.so*")):
            paths = os.environ.get("LD_LIBRARY_PATH", "")
            if lib not in paths.split(os.pathsep):
                os.environ["LD_LIBRARY_PATH"] = lib + (os.pathsep + paths if paths else "")
            return


_find_this_pythons_nvrtc()

CompileError = _native.CompileError
EmulatorError = _native.EmulatorError
Finding = _native.Finding
PtxModule = _native.PtxModule


class FindingError(Exception):
    """A launch a checker objected to. ``str(error)`` is what ``racetrack check`` prints;
    ``error.findings`` holds every finding of the launch (``racetrack._native.Finding``)."""

    def __init__(self, message: str, findings: Sequence[Finding] = ()):
        super().__init__(message)
        self.findings = list(findings)

    @property
    def lines(self) -> List[int]:
        """Every source line the findings name: the kernels' lines and, for a race between
        streams, the host lines that queued the two operations."""
        lines = {line for finding in self.findings for line in finding.lines}
        lines.update(line for _, line in self.queued_at)
        return sorted(lines)

    @property
    def queued_at(self) -> List[Tuple[str, int]]:
        """For races between streams: ``(file, line)`` of each operation's host call (the copy
        or the launch), in the order the reports name them."""
        found: List[Tuple[str, int]] = []
        for finding in self.findings:
            for match in _QUEUED_AT.finditer(finding.text):
                place = (match.group(1), int(match.group(2)))
                if place not in found:
                    found.append(place)
        return found


class RaceError(FindingError):
    """Conflicting accesses by different threads with nothing ordering them."""


class SyncError(FindingError):
    """A barrier not every thread reaches, a deadlock, a warp-sync mask that does not hold."""


class MemoryAccessError(FindingError):
    """An access outside every allocation, misaligned, or of memory nothing wrote."""


for _error in (FindingError, RaceError, SyncError, MemoryAccessError):
    _error.__module__ = "racetrack"  # tracebacks say racetrack.RaceError, as users import it

_ERROR_FOR_CATEGORY = {
    "race": RaceError,
    "sync": SyncError,
    "memory": MemoryAccessError,
    "other": FindingError,
}


@dataclass
class Report:
    """The findings of every launch inside one ``racetrack.checking(raise_on_finding=False)``
    block, in launch order, and the launches themselves: ``(kernel name, finding count)``."""

    findings: List[Finding] = field(default_factory=list)
    launches: List[Tuple[str, int]] = field(default_factory=list)

    @property
    def clean(self) -> bool:
        return not self.findings

    def text(self) -> str:
        """The findings as ``racetrack check`` prints them, a blank line between."""
        return "\n\n".join(finding.text for finding in self.findings)

    def __str__(self) -> str:
        return self.text() if self.findings else "no findings"


@dataclass(frozen=True)
class _Checking:
    options: _native.Options
    raise_on_finding: bool
    report: Optional[Report]


_DEFAULT = _Checking(_native.Options(), True, None)
_current: contextvars.ContextVar[_Checking] = contextvars.ContextVar(
    "racetrack_checking", default=_DEFAULT
)


@contextlib.contextmanager
def checking(
    raise_on_finding: bool = True,
    *,
    schedule: str = "hardware",
    seed: int = 0,
    racecheck: bool = True,
    synccheck: bool = True,
    memcheck: bool = True,
    initcheck: bool = True,
    memory_model: str = "racecheck",
    threads: int = 0,
    step_budget: int = 0,
    engine: str = "auto",
) -> Iterator[Report]:
    """Launches inside the block run with these options, named as ``racetrack check`` names
    them (``--schedule``, ``--seed``, ``--no-racecheck``, ``--memory-model``, ``--threads``,
    ``--step-budget``, ``--engine``). With ``raise_on_finding=False`` a launch a checker objects to does not
    raise: its findings go to the :class:`Report` the block yields.

    >>> with racetrack.checking(raise_on_finding=False, schedule="random", seed=3) as report:
    ...     kernel[4, 64](x)
    >>> print(report)
    """
    options = _native.Options(
        schedule=schedule,
        seed=seed,
        racecheck=racecheck,
        synccheck=synccheck,
        memcheck=memcheck,
        initcheck=initcheck,
        memory_model=memory_model,
        threads=threads,
        step_budget=step_budget,
        engine=engine,
    )
    report = Report()
    token = _current.set(_Checking(options, raise_on_finding, report))
    try:
        yield report
    finally:
        _current.reset(token)


_device_lock = threading.Lock()
_device: Optional[_native.Emulator] = None


def device() -> _native.Emulator:
    """The emulator every face allocates on and launches to (one per process). It holds
    ``RACETRACK_DEVICES`` devices (2 unless set); the Numba face's ``cuda.gpus`` selects among
    them, and the others work on device 0."""
    global _device
    with _device_lock:
        if _device is None:
            _device = _native.Emulator()
        return _device


def event_clock_ms() -> float:
    """What an event records: the host's clock in milliseconds. The emulator runs each piece of
    work when it is queued, so the device reaches a record when the host makes it, and the time
    between two records is the emulator's work between them plus what the host did meanwhile (a
    GPU's idle stream counts that too, as when a tutorial times NumPy between two events). It is
    not a GPU's time; ``time_kernel`` and ``prepared_timed_call`` give a launch's own seconds."""
    return time.perf_counter() * 1e3


def relative_path(path: str) -> str:
    """``path`` as reports name it: relative to the working directory when it is inside it."""
    try:
        relative = os.path.relpath(path)
    except ValueError:  # another drive on Windows
        return path
    return path if relative.startswith("..") else relative


#: PTX entry names (Numba mangles them) to the names users wrote, for reports of races between
#: streams, which name the other launch by its entry.
entry_names = {}


#: ``file:line`` where a report names a place: an access, a thread group, or the host line that
#: queued an operation on a stream (``add at streams.py:16 on device 0's stream 1``).
_PLACE = re.compile(r"([^\s:\"'()]+):(\d+)\b")
#: The host line that queued an operation, in a report of a race between streams.
_QUEUED_AT = re.compile(r" at ([^\s:\"'()]+):(\d+) on device \d+'s stream")


def places(text: str) -> List[Tuple[str, int]]:
    """Every ``(file, line)`` a finding's text names whose file can be read, in order of first
    mention: what its report quotes."""
    found: List[Tuple[str, int]] = []
    for match in _PLACE.finditer(text):
        place = (match.group(1), int(match.group(2)))
        if place not in found and linecache.getline(place[0], place[1]).strip():
            found.append(place)
    return found


def quoted(text: str) -> str:
    """A finding's text followed by each source line it names, quoted as a Python traceback
    quotes a frame's line."""
    quotes = [
        f'  File "{path}", line {line}\n    {linecache.getline(path, line).strip()}'
        for path, line in places(text)
    ]
    return "\n".join([text, *quotes])


def _error_for(findings: Sequence[Finding], kernel: str, where: str) -> FindingError:
    first = findings[0]
    head = f"{kernel}: {len(findings)} finding{'s' if len(findings) != 1 else ''}"
    if where:
        head += f" in the launch at {where}"
    texts = []
    for finding in findings:
        text = finding.text
        for entry, name in entry_names.items():
            if entry in text:
                text = text.replace(entry, name)
        texts.append(quoted(text))
    cls = _ERROR_FOR_CATEGORY.get(first.category, FindingError)
    return cls(f"{head}\n" + "\n\n".join(texts), findings)


def report_findings(findings: Sequence[Finding], what: str, where: str = "") -> None:
    """Raises the :class:`FindingError` for ``findings`` of a launch or a copy named ``what``, or,
    inside ``racetrack.checking(raise_on_finding=False)``, adds them to that block's report."""
    state = _current.get()
    if state.report is not None:
        state.report.launches.append((what, len(findings)))
    if not findings:
        return
    if state.raise_on_finding:
        raise _error_for(findings, what, where)
    assert state.report is not None
    state.report.findings.extend(findings)


def launch(
    module: PtxModule,
    entry: str,
    grid: Tuple[int, int, int],
    block: Tuple[int, int, int],
    args: list,
    *,
    shared_bytes: int = 0,
    kernel_name: Optional[str] = None,
    where: str = "",
    stream: Optional[int] = None,
    cooperative: bool = False,
) -> _native.LaunchResult:
    """Runs one kernel on :func:`device` with the options of the enclosing
    :func:`checking` block, prints what the kernel printed, and raises the
    :class:`FindingError` for what the checkers found (or adds it to the block's report).

    ``args`` are ``(type, value)`` pairs (python/README.md lists the types); ``where`` names
    the launch (``my.py:31``) in the exception's first line. ``stream`` is the emulator's
    number for a stream (``device().create_stream()``): the launch is queued on it, and its
    accesses that race with unordered work on other streams are findings too; without one it
    runs on the current device after everything queued before it. ``cooperative`` launches it
    as ``cudaLaunchCooperativeKernel`` does, for a kernel that syncs its grid.
    """
    state = _current.get()
    name = kernel_name or entry
    if stream is None:
        result = device().launch(
            module, entry, grid, block, args, shared_bytes=shared_bytes, options=state.options, cooperative=cooperative
        )
    else:
        result = device().launch_on(
            stream,
            module,
            entry,
            grid,
            block,
            args,
            shared_bytes=shared_bytes,
            options=state.options,
            label=f"{name} at {where}" if where else name,
            cooperative=cooperative,
        )
    if result.printf:
        print(result.printf, end="")
    report_findings(result.findings, name, where)
    return result


# ---- copies between the host and the device, queued on a stream ----


def _staging(nbytes: int, stream: int) -> int:
    """A buffer in the stream's device's memory standing for the host's side of a copy: the
    copy between it and the device array is what the stream queues and racecheck orders."""
    emulator = device()
    current = emulator.current_device
    emulator.set_device(emulator.stream_device(stream))
    try:
        return emulator.alloc(max(nbytes, 1), "the host's buffer")
    finally:
        emulator.set_device(current)


def copy_from_host_on(stream: int, address: int, data, *, where: str, what: str = "the copy to the device") -> None:
    """Copies ``data`` (bytes, or a 1-D uint8 array) to ``address`` queued on ``stream``
    (``cudaMemcpyAsync`` host to device): ordered after the stream's earlier work, and checked
    against other streams' work that nothing orders before it, which is reported at both
    operations' lines (``where`` is this copy's, ``file.py:15``)."""
    nbytes = len(data)
    if nbytes == 0:
        return
    emulator = device()
    label = f"{what} at {where}" if where else what
    staging = _staging(nbytes, stream)
    try:
        emulator.write(staging, data)
        findings = emulator.copy_on(stream, address, staging, nbytes, racecheck=_current.get().options.racecheck, label=label)
    finally:
        emulator.free(staging)
    if findings:
        report_findings(findings, label)


def copy_to_host_on(stream: int, address: int, out, *, where: str, what: str = "the copy to the host") -> None:
    """Fills ``out`` (a writeable 1-D uint8 array) from ``address`` queued on ``stream``
    (``cudaMemcpyAsync`` device to host), checked as :func:`copy_from_host_on` is."""
    nbytes = len(out)
    if nbytes == 0:
        return
    emulator = device()
    label = f"{what} at {where}" if where else what
    staging = _staging(nbytes, stream)
    try:
        findings = emulator.copy_on(stream, staging, address, nbytes, racecheck=_current.get().options.racecheck, label=label)
        emulator.read_into(staging, out)
    finally:
        emulator.free(staging)
    if findings:
        report_findings(findings, label)


def dim3(value, what: str) -> Tuple[int, int, int]:
    """``value`` (an int or a tuple of one to three ints) as ``(x, y, z)``.

    Anything but an integer raises ``TypeError``, as Numba, PyCUDA and CuPy do: a float would
    otherwise be truncated into a smaller grid than the one written (``N/32`` is a float in
    Python 3)."""
    given = list(value) if isinstance(value, (tuple, list)) else [value]
    for part in given:
        if not isinstance(part, numbers.Integral):
            hint = " (in Python 3, / gives a float: use // or math.ceil)" if isinstance(part, float) else ""
            raise TypeError(
                f"{what} must be an int or a tuple of 1 to 3 ints, got {value!r}: "
                f"{part!r} is a {type(part).__name__}{hint}"
            )
    parts = [int(v) for v in given]
    if not 1 <= len(parts) <= 3 or any(v < 1 for v in parts):
        raise ValueError(f"{what} must be a positive int or a tuple of 1 to 3 of them, not {value!r}")
    while len(parts) < 3:
        parts.append(1)
    return (parts[0], parts[1], parts[2])
