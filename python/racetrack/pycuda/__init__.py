"""``racetrack.pycuda``: PyCUDA's ``SourceModule``, ``driver`` and ``gpuarray`` on Racetrack's
emulator. Replace ``pycuda`` by ``racetrack.pycuda`` in the imports; on a GPU, the original
imports run the same code.

    import racetrack.pycuda.autoinit
    import racetrack.pycuda.driver as drv
    from racetrack.pycuda.compiler import SourceModule
"""
