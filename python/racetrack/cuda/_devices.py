"""Several emulated devices, as Numba shows them: ``cuda.gpus``, ``select_device``,
``get_current_device``, ``current_context`` and peer access.

The emulator holds ``RACETRACK_DEVICES`` devices (2 unless set: chapter 8's ring needs two, as
``cargo run -p ch8-many-gpus`` emulates by default), each with its own memory in one address
space. Numba keeps a stack of current contexts: ``with cuda.gpus[1]:`` pushes device 1's and pops
it at the end, ``select_device(1)`` pushes it and leaves it there. Here that stack is one per
process (CUDA's is one per thread), and its top is the emulator's current device, which
allocations and launches go to."""

from __future__ import annotations

from typing import List

from .._core import EmulatorError, device
from ._compile import COMPUTE_CAPABILITY

#: The devices pushed by ``with cuda.gpus[i]``, ``select_device`` and ``current_context(i)``;
#: empty means device 0, where Numba creates its first context.
_pushed: List[int] = []


def current_device_id() -> int:
    return _pushed[-1] if _pushed else 0


def _push(device_id: int) -> None:
    _pushed.append(device_id)
    device().set_device(device_id)


def _pop(device_id: int) -> None:
    if not _pushed or _pushed[-1] != device_id:
        raise RuntimeError(f"device {device_id}'s context is not the current one: it cannot be popped")
    _pushed.pop()
    device().set_device(current_device_id())


class _ContextHandle:
    """What ``Context.handle`` is (a ``CUcontext`` in Numba): what ``enable_peer_access`` takes."""

    def __init__(self, device_id: int):
        self.device_id = device_id

    def __int__(self) -> int:
        return self.device_id + 1  # a CUcontext is never 0

    def __repr__(self) -> str:
        return f"<CUcontext of emulated device {self.device_id}>"


class Context:
    """A device's primary context, as ``cuda.current_context()`` returns it."""

    def __init__(self, device_: "Device"):
        self.device = device_
        self.handle = _ContextHandle(device_.id)

    def __repr__(self) -> str:
        return f"<CUDA context of device {self.device.id} (emulated)>"

    def can_access_peer(self, peer_device: int) -> bool:
        """Whether this device can be given access to ``peer_device``'s memory: every other
        emulated device can."""
        return int(peer_device) != self.device.id and 0 <= int(peer_device) < len(gpus)

    def enable_peer_access(self, peer_context, flags: int = 0) -> None:
        """Lets kernels on the *current* device (as ``cuCtxEnablePeerAccess``, whatever context
        this is called on) read and write ``peer_context``'s device memory. Numba passes the
        peer context's ``handle``: ``ctx.enable_peer_access(cuda.gpus[j].get_primary_context().handle)``."""
        if flags != 0:
            raise ValueError("enable_peer_access: flags is reserved and must be 0")
        if not isinstance(peer_context, _ContextHandle):
            raise TypeError(
                "enable_peer_access takes the peer context's handle, as numba-cuda passes it to "
                "cuCtxEnablePeerAccess: cuda.gpus[j].get_primary_context().handle, not "
                f"{type(peer_context).__name__}"
            )
        reader, owner = current_device_id(), peer_context.device_id
        if device().peer_access_enabled(reader, owner) and reader != owner:
            raise EmulatorError(
                f"peer access from device {reader} to device {owner} is already enabled "
                "(CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED)"
            )
        device().enable_peer_access(owner)

    def synchronize(self) -> None:
        from ._streams import synchronize_device

        synchronize_device(self.device.id)

    def get_memory_info(self):
        raise NotImplementedError("the emulator's memory has no fixed size: get_memory_info is not there")


class Device:
    """One emulated device, as ``cuda.gpus[i]`` and ``cuda.get_current_device()`` give it; a
    context manager that makes it current (``with cuda.gpus[1]:``)."""

    name = b"Racetrack PTX emulator"
    compute_capability = COMPUTE_CAPABILITY
    MAX_THREADS_PER_BLOCK = 1024
    MAX_BLOCK_DIM_X = 1024
    MAX_BLOCK_DIM_Y = 1024
    MAX_BLOCK_DIM_Z = 64
    MAX_GRID_DIM_X = 2**31 - 1
    MAX_GRID_DIM_Y = 65535
    MAX_GRID_DIM_Z = 65535
    MAX_SHARED_MEMORY_PER_BLOCK = 48 * 1024
    WARP_SIZE = 32
    MULTIPROCESSOR_COUNT = 1
    UNIFIED_ADDRESSING = 1

    def __init__(self, device_id: int):
        self.id = device_id
        self._context = Context(self)

    def get_primary_context(self) -> Context:
        return self._context

    def reset(self) -> None:
        pass

    def __enter__(self) -> None:
        _push(self.id)

    def __exit__(self, *exc) -> None:
        _pop(self.id)

    def __repr__(self) -> str:
        return f"<CUDA device {self.id} 'Racetrack PTX emulator'>"

    def __str__(self) -> str:
        return f"<Managed Device {self.id}>"


class _DeviceList:
    """``cuda.gpus``: every emulated device."""

    def __init__(self):
        self._devices = None

    @property
    def lst(self) -> List[Device]:
        if self._devices is None:
            self._devices = [Device(i) for i in range(device().device_count)]
        return self._devices

    def __getitem__(self, devnum):
        return self.lst[devnum if isinstance(devnum, (int, slice)) else int(devnum)]

    def __len__(self) -> int:
        return len(self.lst)

    def __iter__(self):
        return iter(self.lst)

    def __str__(self) -> str:
        return ", ".join(str(d) for d in self.lst)

    @property
    def current(self) -> Device:
        return self.lst[current_device_id()]


gpus = _DeviceList()


def _device_number(device_id) -> int:
    number = int(device_id)
    if not 0 <= number < len(gpus):
        raise ValueError(
            f"device {number} does not exist: the emulator holds {len(gpus)} "
            f"(0 to {len(gpus) - 1}; set RACETRACK_DEVICES for more)"
        )
    return number


def select_device(device_id: int) -> Device:
    """Makes ``device_id`` current (pushing its context, as Numba does) and returns it."""
    number = _device_number(device_id)
    _push(number)
    return gpus[number]


def get_current_device() -> Device:
    return gpus.current


def current_context(devnum=None) -> Context:
    """The current device's context; with ``devnum``, that device's, made current as Numba does."""
    if devnum is not None:
        return select_device(devnum).get_primary_context()
    return gpus.current.get_primary_context()


def list_devices() -> _DeviceList:
    return gpus


def detect() -> bool:
    count = len(gpus)
    print(f"Found {count} CUDA devices")
    cc = f"{COMPUTE_CAPABILITY[0]}.{COMPUTE_CAPABILITY[1]}"
    for each in gpus:
        print(f"id {each.id}    {each.name!r}                              [SUPPORTED]")
        print(f"                      Compute Capability: {cc}")
        print("                                   Emulated: ptx-emu, Racetrack's PTX emulator")
    print(f"Summary:\n\t{count}/{count} devices are supported")
    return True
