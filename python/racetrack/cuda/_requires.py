"""What the Numba face needs, checked before Numba is imported.

Numba's CUDA compiler is what turns ``@cuda.jit`` kernels into PTX. Its pinned release,
numba-cuda 0.30.4 (like the numba >= 0.61 it needs), ships wheels for CPython 3.10 and later
only, so the package installs it there alone. Importing ``racetrack.cuda`` elsewhere raises the
one line that says so, instead of a ModuleNotFoundError or a traceback from deep inside an older
Numba.
"""

import sys
from importlib import metadata

NEEDS = "racetrack.cuda (the Numba face) needs Python >= 3.10 and numba-cuda 0.30.4"

if sys.version_info < (3, 10):
    raise ImportError(
        f"{NEEDS}; this is Python {sys.version_info[0]}.{sys.version_info[1]}, where the PyCUDA "
        "and CuPy faces (racetrack.pycuda, racetrack.cupy) work"
    )

# Asked of the installed distributions, not by importing: without numba-cuda, `numba.cuda` may
# still import (an older numba's own CUDA target) and fail later, inside Numba.
try:
    metadata.version("numba-cuda")
except metadata.PackageNotFoundError:
    raise ImportError(f"{NEEDS}, which is not installed: pip install 'numba-cuda==0.30.4'") from None
