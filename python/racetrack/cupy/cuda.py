"""``cupy.cuda`` as far as a raw-kernel tutorial uses it: the device, synchronizing, streams
and events. The emulator runs each launch and copy to its end when it is issued, so
synchronizing is always already done; events read the emulator's clock (the milliseconds it
has spent running kernels)."""

from __future__ import annotations

import sys
from types import SimpleNamespace
from typing import Optional

from .._core import device as _device
from . import _compiler as compiler

# ``from cupy.cuda.compiler import CompileException``: this module is not a package, so the
# submodule is found by its name in sys.modules, where the import system looks first.
sys.modules[__name__ + ".compiler"] = compiler


class CUDADriverError(RuntimeError):
    """A call the driver refuses (a symbol that is not there)."""


driver = SimpleNamespace(CUDADriverError=CUDADriverError)


class Device:
    """The emulated device (there is one: ``Device(0)``)."""

    def __init__(self, device: int = 0):
        self.id = int(device)

    def synchronize(self) -> None:
        """Launches and copies finish when issued on the emulator."""

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
    """Accepted wherever CuPy takes a stream; work is finished when it is issued."""

    null: "Stream"

    def __init__(self, null: bool = False, non_blocking: bool = False, ptds: bool = False):
        self.is_null = null

    def synchronize(self) -> None:
        pass

    def use(self) -> "Stream":
        return self

    def __enter__(self) -> "Stream":
        return self

    def __exit__(self, *exc) -> None:
        pass

    def record(self, event: Optional["Event"] = None) -> "Event":
        event = event or Event()
        event.record(self)
        return event


Stream.null = Stream(null=True)


class Event:
    """Records the emulator's clock."""

    def __init__(self, block: bool = False, disable_timing: bool = False, interprocess: bool = False):
        self.disable_timing = disable_timing
        self._clock_ms: Optional[float] = None

    def record(self, stream: Optional[Stream] = None) -> None:
        self._clock_ms = _device().clock_ms

    def synchronize(self) -> None:
        pass

    @property
    def done(self) -> bool:
        return True


def get_elapsed_time(start_event: Event, end_event: Event) -> float:
    """Milliseconds of the emulator's clock between two recorded events."""
    if start_event._clock_ms is None or end_event._clock_ms is None:
        raise RuntimeError("both events must be recorded before the time between them is asked")
    if start_event.disable_timing or end_event.disable_timing:
        raise RuntimeError("events made with disable_timing=True have no elapsed time")
    return end_event._clock_ms - start_event._clock_ms


def _device_synchronize() -> None:
    pass


runtime = SimpleNamespace(deviceSynchronize=_device_synchronize, getDeviceCount=lambda: 1)
