"""``import racetrack.pycuda.autoinit``: a stand-in for PyCUDA that runs kernels on Racetrack's
PTX emulator, with its checkers, on a machine without a GPU.

Import the submodules as you would PyCUDA's::

    import racetrack.pycuda.autoinit
    import racetrack.pycuda.driver as drv
    from racetrack.pycuda.compiler import SourceModule
    from racetrack.pycuda import gpuarray
    from racetrack.pycuda.elementwise import ElementwiseKernel
    from racetrack.pycuda.reduction import ReductionKernel

``SourceModule`` compiles with NVRTC (wrapping the source in ``extern "C" { }`` as PyCUDA
does); a launch a checker objects to raises ``racetrack.RaceError``, ``SyncError`` or
``MemoryAccessError`` naming the kernel's line in your ``.py`` file. Moving to a real GPU is the
import lines alone: ``import pycuda.autoinit`` and so on.
"""

VERSION = (2025, 1)
VERSION_TEXT = "2025.1 (racetrack)"
