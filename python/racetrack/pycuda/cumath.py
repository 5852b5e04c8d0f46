"""``racetrack.pycuda.cumath``: elementwise functions of a ``GPUArray`` (computed with NumPy
on the host: the kernels a learner writes are what the checkers are for)."""

from __future__ import annotations

import numpy as np

from .gpuarray import GPUArray, _contiguous_only


def _elementwise(function):
    def apply(array: GPUArray, stream=None, out=None) -> GPUArray:
        _contiguous_only(array)
        result = array._like_host(function(array.get()))
        if out is not None:
            out.set(result.get())
            return out
        return result

    apply.__name__ = function.__name__
    apply.__doc__ = f"``{function.__name__}`` of every element."
    return apply


sin, cos, tan = _elementwise(np.sin), _elementwise(np.cos), _elementwise(np.tan)
asin, acos, atan = _elementwise(np.arcsin), _elementwise(np.arccos), _elementwise(np.arctan)
sinh, cosh, tanh = _elementwise(np.sinh), _elementwise(np.cosh), _elementwise(np.tanh)
exp, log, log10, sqrt = (
    _elementwise(np.exp),
    _elementwise(np.log),
    _elementwise(np.log10),
    _elementwise(np.sqrt),
)
fabs, floor, ceil = _elementwise(np.fabs), _elementwise(np.floor), _elementwise(np.ceil)
