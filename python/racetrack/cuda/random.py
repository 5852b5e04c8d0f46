"""``racetrack.cuda.random``: Numba's xoroshiro128+ generators, their states in the emulator's
memory. The device functions are Numba's own; only making the states differs."""

from numba.cuda.random import (  # noqa: F401
    init_xoroshiro128p_states_cpu,
    xoroshiro128p_dtype,
    xoroshiro128p_jump,
    xoroshiro128p_next,
    xoroshiro128p_normal_float32,
    xoroshiro128p_normal_float64,
    xoroshiro128p_uniform_float32,
    xoroshiro128p_uniform_float64,
)

import numpy as np

from ._arrays import DeviceNDArray, device_array


def init_xoroshiro128p_states(states, seed, subsequence_start=0, stream=0):
    """Sets ``states`` (a device array of ``xoroshiro128p_dtype``) to ``len(states)``
    generators 2**64 steps apart, computed on the host as Numba does."""
    host = np.empty(shape=states.shape, dtype=xoroshiro128p_dtype)
    init_xoroshiro128p_states_cpu(host, seed, subsequence_start)
    states.copy_to_device(host, stream=stream)


def create_xoroshiro128p_states(n, seed, subsequence_start=0, stream=0):
    """A device array of ``n`` generator states (see :func:`init_xoroshiro128p_states`)."""
    states = device_array(n, dtype=xoroshiro128p_dtype, stream=stream)
    init_xoroshiro128p_states(states, seed, subsequence_start, stream)
    return states


# Tutorials keep `from numba.cuda.random import create_xoroshiro128p_states` beside the changed
# `cuda` import line, so Numba's own module is where their host calls land: it hands them here.
# A module whose `cuda` is Numba's real one (a GPU machine running both side by side) still gets
# Numba's functions.
import functools as _functools
import sys as _sys

import numba.cuda as _numba_cuda
import numba.cuda.random as _numba_random

_numbas_create = _numba_random.create_xoroshiro128p_states
_numbas_init = _numba_random.init_xoroshiro128p_states


@_functools.wraps(_numbas_create)
def _create_for_the_callers_cuda(n, seed, subsequence_start=0, stream=0):
    if _sys._getframe(1).f_globals.get("cuda") is _numba_cuda:
        return _numbas_create(n, seed, subsequence_start, stream)
    return create_xoroshiro128p_states(n, seed, subsequence_start, stream)


@_functools.wraps(_numbas_init)
def _init_for_the_states_device(states, seed, subsequence_start=0, stream=0):
    if isinstance(states, DeviceNDArray):
        return init_xoroshiro128p_states(states, seed, subsequence_start, stream)
    return _numbas_init(states, seed, subsequence_start, stream)


_numba_random.create_xoroshiro128p_states = _create_for_the_callers_cuda
_numba_random.init_xoroshiro128p_states = _init_for_the_states_device
