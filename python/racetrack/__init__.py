"""Racetrack for Python: CUDA kernels from Numba, PyCUDA and CuPy run on Racetrack's PTX
emulator, with races, barrier mistakes and bad accesses reported at your source line.

Change only the import line::

    from racetrack import cuda        # instead of: from numba import cuda

A launch a checker objects to raises :class:`RaceError`, :class:`SyncError` or
:class:`MemoryAccessError` (all :class:`FindingError`), whose text is what ``racetrack check``
prints. ``with racetrack.checking(raise_on_finding=False) as report:`` collects findings instead,
and takes ``racetrack check``'s options (schedule, seed, checkers, memory model, threads).
"""

from ._core import (
    CompileError,
    EmulatorError,
    Finding,
    FindingError,
    MemoryAccessError,
    RaceError,
    Report,
    SyncError,
    checking,
    device,
    launch,
)
from ._native import CompiledKernel, Options, PtxModule, compile_cuda, nvrtc_version

__all__ = [
    "CompileError",
    "CompiledKernel",
    "EmulatorError",
    "Finding",
    "FindingError",
    "MemoryAccessError",
    "Options",
    "PtxModule",
    "RaceError",
    "Report",
    "SyncError",
    "checking",
    "compile_cuda",
    "device",
    "launch",
    "nvrtc_version",
]

__version__ = "0.1.0"
