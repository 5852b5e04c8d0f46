"""``cuda.reduce``: a reduction with a binary function, compiled as a device function into a
block-level tree reduction that runs on the emulator like any other kernel."""

from __future__ import annotations

import functools

import numba
import numba.cuda as cuda
import numpy as np

from ._arrays import device_array
from ._compile import DeviceFunction
from ._kernel import Kernel

#: Threads per block of the reduction kernel (a power of two).
_BLOCK = 128
#: At most this many blocks; each leaves one partial result, combined on the host.
_MAX_BLOCKS = 64


def _reduction_kernel(binop: DeviceFunction, dtype) -> Kernel:
    element = numba.from_dtype(dtype)
    block = _BLOCK

    def partial_reduce(arr, n, partials):
        cache = cuda.shared.array(block, element)
        tid = cuda.threadIdx.x
        first = cuda.blockIdx.x * block + tid
        stride = block * cuda.gridDim.x
        if first < n:
            acc = arr[first]
            i = first + stride
            while i < n:
                acc = binop(acc, arr[i])
                i += stride
            cache[tid] = acc
        cuda.syncthreads()
        # Every block starts inside the array, so its first `valid` threads hold a value.
        valid = min(block, n - cuda.blockIdx.x * block)
        step = 1
        while step < block:
            if tid % (2 * step) == 0 and tid + step < valid:
                cache[tid] = binop(cache[tid], cache[tid + step])
            cuda.syncthreads()
            step *= 2
        if tid == 0:
            partials[cuda.blockIdx.x] = cache[0]

    return Kernel(partial_reduce)


class Reduce:
    """``cuda.reduce(binop)`` / ``cuda.Reduce(binop)``: ``reducer(arr, size=None, res=None,
    init=0, stream=0)`` combines a 1-D array's elements with ``binop``."""

    def __init__(self, functor):
        self._py_func = functor.py_func if isinstance(functor, DeviceFunction) else functor
        self._device = functor if isinstance(functor, DeviceFunction) else DeviceFunction(functor, {})
        self._kernels = {}

    def __call__(self, arr, size=None, res=None, init=0, stream=0):
        if arr.ndim != 1:
            raise TypeError("only support 1D array")
        n = arr.size if size is None else min(int(size), arr.size)
        dtype = np.dtype(arr.dtype)
        init = dtype.type(init)
        if n < 1:
            return init
        kernel = self._kernels.get(dtype)
        if kernel is None:
            kernel = self._kernels[dtype] = _reduction_kernel(self._device, dtype)
        blocks = min(_MAX_BLOCKS, -(-n // _BLOCK))
        partials = device_array(blocks, dtype)
        kernel[blocks, _BLOCK, stream](arr, np.int64(n), partials)
        result = functools.reduce(self._py_func, partials.copy_to_host().tolist(), init)
        result = dtype.type(result)
        if res is not None:
            res[(0,) * res.ndim] = result
            return None
        return result
