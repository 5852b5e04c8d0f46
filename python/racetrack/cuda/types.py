"""``racetrack.cuda.types``, as ``numba.cuda.types``: Numba's CUDA types themselves (``int32``,
``float32[:]``, ``CPointer``), so a kernel typed with them is compiled by Numba as it is on a GPU."""

import numba.cuda.types as _numba_types

# Every public name, not only `__all__`: programs write `types.CPointer(types.uint8)`, and
# CPointer is one of the names Numba's `__all__` leaves out.
globals().update({name: value for name, value in vars(_numba_types).items() if not name.startswith("_")})
