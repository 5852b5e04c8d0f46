"""``@cuda.vectorize`` and ``@cuda.guvectorize``, built by numba-cuda's own machinery
(``numba.cuda.vectorizers``): the same generated kernel around the same device function, the
same signature matching, broadcasting, ``out=`` and ``stream=`` handling. Only the places where
that machinery reaches for a GPU are pointed at the emulator: the kernel is a racetrack
``Kernel``, and device arrays, copies and views are racetrack's."""

from __future__ import annotations

import contextvars
import inspect
import sys

import numba.cuda as numba_cuda
import numpy as np
from numba.cuda import deviceufunc
from numba.cuda import vectorizers as numba_vectorizers

from .. import _core
from ._arrays import DeviceNDArray, device_array, is_cuda_array, to_device
from ._compile import for_numba
from ._kernel import Kernel, _Launch


def _device_function(pyfunc, signature, **options):
    """The ufunc's body as Numba's device function for ``signature``, with line info, so that
    reports name the lines of the decorated function."""
    return numba_cuda.jit(signature, device=True, lineinfo=True, **options)(for_numba(pyfunc))


def _ufunc_kernel(stager, signature, pyfunc, out_names, kind: str) -> Kernel:
    """The generated kernel as a racetrack kernel, named after the ufunc, its arrays named
    after the ufunc's parameters in reports (``x[3]``, not ``a0[3]``)."""
    # Numba exec()s the kernel's source, so its lines are "<string>:5"; reports name it as
    # "<cuda.vectorize kernel of add>:5" instead, beside the body's own `.py` line.
    stager.__code__ = stager.__code__.replace(co_filename=f"<cuda.{kind} kernel of {pyfunc.__name__}>")
    kernel = Kernel(stager, [signature])
    kernel.__name__ = pyfunc.__name__
    kernel._params = list(inspect.signature(pyfunc).parameters)[: len(kernel._params) - len(out_names)]
    kernel._params += out_names
    return kernel


#: Where the user called the ufunc ("file.py:12"): launches say so in their reports.
_call_site: contextvars.ContextVar[str] = contextvars.ContextVar("racetrack_ufunc_call_site", default="")


def _from_the_callers_line(call, depth: int = 2):
    """Runs ``call`` (a ufunc's work) with its launches named after the user's line, ``depth``
    frames up; a finding, or Numba's own one-line complaint about the arguments (no matching
    signature, shapes that do not broadcast), ends its traceback there, not inside numba-cuda's
    ufunc machinery."""
    token = None
    if not _call_site.get():  # the outermost call is the user's (`reduce` calls the ufunc itself)
        caller = sys._getframe(depth)
        token = _call_site.set(f"{_core.relative_path(caller.f_code.co_filename)}:{caller.f_lineno}")
    try:
        return call()
    except (_core.FindingError, TypeError, ValueError, NotImplementedError) as error:
        raise error.with_traceback(None) from None
    finally:
        if token is not None:
            _call_site.reset(token)


def _launch(kernel: Kernel, count: int, stream, args) -> None:
    """``kernel.forall(count)``, as Numba launches ufunc kernels, at the user's line. (Numba's
    forall sizes blocks by the GPU's occupancy; the emulator has none, so 128 threads.)"""
    blocks = max(1, -(-int(count) // 128))
    kernel._run(_Launch(kernel, (blocks, 1, 1), (128, 1, 1), stream, 0), args, _call_site.get())


def _broadcast_view(ary: DeviceNDArray, shape, strides) -> DeviceNDArray:
    """A view that repeats elements through zero strides, as Numba's broadcasting makes."""
    return ary._view(tuple(shape), tuple(strides), 0)


# -- @cuda.vectorize ------------------------------------------------------------------------


class _UFuncMechanism(numba_vectorizers.CUDAUFuncMechanism):
    """Numba's call resolution, broadcasting and copies, on racetrack's device arrays."""

    def launch(self, func, count, stream, args):
        _launch(func, count, stream, args)

    def is_device_array(self, obj):
        return is_cuda_array(obj)

    def as_device_array(self, obj):
        return obj

    def to_device(self, hostary, stream):
        return to_device(np.ascontiguousarray(hostary), stream=stream)

    def to_host(self, devary, stream):
        return devary.copy_to_host(stream=stream)

    def allocate_device_array(self, shape, dtype, stream):
        return device_array(shape, dtype, stream=stream)

    def _broadcast(self, arys):
        # NumPy's rule: shapes line up from the last axis. numba-cuda 0.30.4 lines them up from
        # the first, so a row vector against a matrix reads zeros (strides all 0); NumPy's own
        # broadcast_to does it right for host arrays, and broadcast_device below for device ones.
        shape = deviceufunc._multi_broadcast(*[a.shape for a in arys])
        return [
            a if a.shape == shape else self.broadcast_device(a, shape) if is_cuda_array(a) else np.broadcast_to(a, shape)
            for a in arys
        ]

    def broadcast_device(self, ary, shape):
        missing = len(shape) - ary.ndim
        strides = [0] * missing + list(ary.strides)
        for axis in range(missing, len(shape)):
            if ary.shape[axis - missing] != shape[axis]:
                strides[axis] = 0
        return _broadcast_view(ary, shape, strides)


class UFuncDispatcher(numba_vectorizers.CUDAUFuncDispatcher):
    """What ``@cuda.vectorize([...])`` returns: call it on NumPy or device arrays and scalars,
    with ``out=`` and ``stream=``; ``.reduce(array)`` for a binary one."""

    def __init__(self, types_to_retty_kernels, pyfunc):
        super().__init__(types_to_retty_kernels, pyfunc)
        self.py_func = pyfunc  # as a kernel's: the function written, for its source lines

    def __call__(self, *args, **kws):
        out = kws.get("out")
        if isinstance(out, np.ndarray):
            if not out.flags.c_contiguous:
                raise ValueError(f"{self.__name__}: out= must be a C-contiguous array")
            # Numba compares out= with the flattened shape of the inputs; a C-contiguous out= of
            # any shape is the same memory flattened, so it is passed as such and reshaped back.
            kws["out"] = out.reshape(-1)
        result = _from_the_callers_line(lambda: _UFuncMechanism.call(self.functions, args, kws))
        return result

    def reduce(self, arg, stream=0):
        if len(next(iter(self.functions))) != 2:
            raise TypeError(f"{self.__name__}.reduce needs a ufunc of two arguments")
        if arg.ndim != 1:
            raise TypeError(f"{self.__name__}.reduce takes a 1-D array")
        n = arg.shape[0]
        if n == 0:
            raise TypeError("Reduction on an empty array.")
        if n == 1:
            return arg[0]
        memory = arg if is_cuda_array(arg) else to_device(arg)
        # Numba's own pairwise halving, each step a launch of this ufunc on two halves.
        result = _from_the_callers_line(lambda: self._CUDAUFuncDispatcher__reduce(memory, [], stream))
        return result.copy_to_host()[0]


class Vectorize(numba_vectorizers.CUDAVectorize):
    def _compile_core(self, sig):
        # Numba asks for inline="always" here; that inlines in Numba's IR, where the body's lines
        # lose their file (reports would say <string>:14). LLVM inlines it all the same.
        core = _device_function(self.pyfunc, sig)
        return core, core.overloads[sig.args].signature.return_type

    def _get_globals(self, corefn):
        namespace = dict(self.pyfunc.__globals__)
        namespace.update({"__cuda__": numba_cuda, "__core__": corefn})
        return namespace

    def _compile_kernel(self, fnobj, sig):
        return _ufunc_kernel(fnobj, sig, self.pyfunc, ["out"], "vectorize")

    def build_ufunc(self):
        return UFuncDispatcher(self.kernelmap, self.pyfunc)


# -- @cuda.guvectorize ----------------------------------------------------------------------


class _GUFuncCallSteps(deviceufunc.GUFuncCallSteps):
    __slots__ = ["_stream"]

    def __init__(self, nin, nout, args, kwargs):
        super().__init__(nin, nout, args, kwargs)
        self._stream = kwargs.get("stream", 0)

    def is_device_array(self, obj):
        return is_cuda_array(obj)

    def as_device_array(self, obj):
        return obj

    def to_device(self, hostary):
        return to_device(np.ascontiguousarray(hostary), stream=self._stream)

    def to_host(self, devary, hostary):
        return devary.copy_to_host(hostary, stream=self._stream)

    def allocate_device_array(self, shape, dtype):
        return device_array(shape, dtype, stream=self._stream)

    def launch_kernel(self, kernel, nelem, args):
        _launch(kernel, nelem, self._stream, args)


class GUFuncDispatcher(numba_vectorizers.CUDAGeneralizedUFunc):
    """What ``@cuda.guvectorize([...], "(n),(n)->()")`` returns."""

    def __init__(self, kernelmap, engine, pyfunc):
        super().__init__(kernelmap, engine, pyfunc)
        self.py_func = pyfunc  # as a kernel's: the function written, for its source lines

    @property
    def _call_steps(self):
        return _GUFuncCallSteps

    def __call__(self, *args, **kws):
        return _from_the_callers_line(lambda: super(GUFuncDispatcher, self).__call__(*args, **kws))

    def _broadcast_scalar_input(self, ary, shape):
        return _broadcast_view(ary.reshape(1) if ary.ndim == 0 else ary, (shape,), (0,))

    def _broadcast_add_axis(self, ary, newshape):
        added = len(newshape) - ary.ndim
        return _broadcast_view(ary, newshape, (0,) * added + tuple(ary.strides))


class GUVectorize(numba_vectorizers.CUDAGUFuncVectorize):
    def build_ufunc(self):
        engine = deviceufunc.GUFuncEngine(self.inputsig, self.outputsig)
        return GUFuncDispatcher(kernelmap=self.kernelmap, engine=engine, pyfunc=self.pyfunc)

    def _compile_kernel(self, fnobj, sig):
        outputs = len(self.outputsig)
        names = list(inspect.signature(self.pyfunc).parameters)
        return _ufunc_kernel(fnobj, sig, self.pyfunc, names[len(names) - outputs :], "guvectorize")

    def _get_globals(self, sig):
        namespace = dict(self.pyfunc.__globals__)
        namespace.update({"__cuda__": numba_cuda, "__core__": _device_function(self.pyfunc, sig)})
        return namespace


def vectorize(signatures=None, identity=None, cache=False, **targetoptions):
    """``@cuda.vectorize(["float32(float32, float32)", ...])``: an elementwise ufunc whose body is a
    device function, run one element per thread."""
    targetoptions.pop("target", None)
    if callable(signatures) or not signatures:
        raise TypeError(
            "cuda.vectorize needs its signatures, as Numba's CUDA target does: "
            "@cuda.vectorize(['float32(float32, float32)'])"
        )

    def decorate(pyfunc):
        builder = Vectorize(pyfunc, identity=identity, cache=cache, targetoptions=targetoptions)
        for signature in [signatures] if isinstance(signatures, str) else signatures:
            builder.add(signature)
        return builder.build_ufunc()

    return decorate


def guvectorize(signatures, layout, identity=None, cache=False, **targetoptions):
    """``@cuda.guvectorize([...], "(n),(n)->()")``: a generalized ufunc; the body fills its output
    arrays, one outer element per thread."""
    targetoptions.pop("target", None)

    def decorate(pyfunc):
        builder = GUVectorize(pyfunc, layout, identity=identity, cache=cache, targetoptions=targetoptions)
        for signature in [signatures] if isinstance(signatures, str) else signatures:
            builder.add(signature)
        return builder.build_ufunc()

    return decorate
