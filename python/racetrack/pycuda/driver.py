"""``racetrack.pycuda.driver``: memory, the ``In``/``Out``/``InOut`` argument wrappers, and the
few driver calls tutorials make."""

from __future__ import annotations

import numpy as np

from .._core import device as _device
from .._core import CompileError  # noqa: F401  (pycuda.driver.CompileError)


class DeviceAllocation:
    """``mem_alloc``'s result: ``int(allocation)`` is its device address."""

    def __init__(self, nbytes: int, label: str = "mem_alloc"):
        self.nbytes = int(nbytes)
        self.address = _device().alloc(self.nbytes, label, uninit=True)

    def __int__(self) -> int:
        return self.address

    __index__ = __int__

    def free(self) -> None:
        if self.address:
            _device().free(self.address)
            self.address = 0

    def __repr__(self) -> str:
        return f"<racetrack DeviceAllocation {self.nbytes} bytes at {self.address:#x}>"


def mem_alloc(nbytes: int) -> DeviceAllocation:
    return DeviceAllocation(nbytes)


def _bytes(array: np.ndarray) -> np.ndarray:
    return np.ravel(np.ascontiguousarray(array), order="K").view(np.uint8)


def memcpy_htod(dest, src) -> None:
    _device().write(int(dest), _bytes(np.asarray(src)))


def memcpy_dtoh(dest: np.ndarray, src) -> None:
    if not dest.flags.c_contiguous:
        raise ValueError("memcpy_dtoh needs a C-contiguous destination")
    _device().read_into(int(src), dest.reshape(-1).view(np.uint8))


def memcpy_dtod(dest, src, size: int) -> None:
    _device().copy(int(dest), int(src), int(size))


def to_device(array) -> DeviceAllocation:
    array = np.asarray(array)
    allocation = DeviceAllocation(array.nbytes, "to_device")
    memcpy_htod(allocation, array)
    return allocation


def from_device(allocation, shape, dtype, order="C") -> np.ndarray:
    out = np.empty(shape, dtype, order=order)
    memcpy_dtoh(out, allocation)
    return out


class ArgumentHandler:
    """A host array a kernel reads (``In``), writes (``Out``) or both (``InOut``): copied to the
    device before the launch and back after it, as PyCUDA does."""

    copy_in = False
    copy_out = False

    def __init__(self, array: np.ndarray):
        if not isinstance(array, np.ndarray):
            raise TypeError(f"{type(self).__name__} takes a NumPy array")
        self.array = array


class In(ArgumentHandler):
    copy_in = True


class Out(ArgumentHandler):
    copy_out = True


class InOut(ArgumentHandler):
    copy_in = True
    copy_out = True


class Context:
    @staticmethod
    def synchronize() -> None:
        """Every launch has finished when it returns, on the emulator."""

    @staticmethod
    def get_device() -> "Device":
        return Device(0)

    @staticmethod
    def pop() -> None:
        pass


class Device:
    def __init__(self, number: int = 0):
        if number != 0:
            raise ValueError("the emulator is device 0")

    @staticmethod
    def count() -> int:
        return 1

    def name(self) -> str:
        return "Racetrack PTX emulator"

    def compute_capability(self):
        return (9, 0)


def init(flags: int = 0) -> None:
    pass


class Stream:
    def synchronize(self) -> None:
        pass

    def is_done(self) -> bool:
        return True


class Event:
    """Records the emulator's clock (the time it has spent running kernels)."""

    def __init__(self, flags: int = 0):
        self._clock_ms = None

    def record(self, stream=None) -> "Event":
        self._clock_ms = _device().clock_ms
        return self

    def synchronize(self) -> "Event":
        return self

    def query(self) -> bool:
        return True

    def time_since(self, earlier: "Event") -> float:
        return self._clock_ms - earlier._clock_ms

    def time_till(self, later: "Event") -> float:
        return later._clock_ms - self._clock_ms
