"""``racetrack.cuda.types``, as ``numba.cuda.types``: Numba's CUDA types themselves (``int32``,
``float32[:]``), so a kernel typed with them is compiled by Numba as it is on a GPU."""

from numba.cuda.types import *  # noqa: F401,F403 (the same objects, re-exported)
