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

from ._arrays import device_array


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
