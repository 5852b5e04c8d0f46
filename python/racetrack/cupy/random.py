"""``cupy.random`` as far as a raw-kernel tutorial fills its inputs with it (made by NumPy on
the host, then copied to the emulator's memory)."""

from __future__ import annotations

import numpy as np

_generator = np.random.default_rng()


def seed(value=None) -> None:
    global _generator
    _generator = np.random.default_rng(value)


def _device(host):
    from . import asarray

    return asarray(host)


def rand(*shape, dtype=float):
    return _device(_generator.random(shape).astype(dtype))


def random(size=None, dtype=float):
    return _device(np.asarray(_generator.random(size)).astype(dtype))


def randn(*shape, dtype=float):
    return _device(_generator.standard_normal(shape).astype(dtype))


def randint(low, high=None, size=None, dtype=int):
    return _device(np.asarray(_generator.integers(low, high, size)).astype(dtype))


def uniform(low=0.0, high=1.0, size=None, dtype=float):
    return _device(np.asarray(_generator.uniform(low, high, size)).astype(dtype))


def normal(loc=0.0, scale=1.0, size=None, dtype=float):
    return _device(np.asarray(_generator.normal(loc, scale, size)).astype(dtype))
