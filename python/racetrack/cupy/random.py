"""``cupy.random``'s common calls: the numbers are made by NumPy on the host, then copied to
the emulator's memory. They are not CuPy's stream of numbers for the same seed (CuPy's
generator runs on the GPU); a seed makes them repeatable here. Calls not listed raise
``NotImplementedError`` naming them."""

from __future__ import annotations

import numpy as np

_generator = np.random.default_rng()


def seed(value=None) -> None:
    global _generator
    _generator = np.random.default_rng(value)


def _device(host):
    from . import asarray

    return asarray(np.asarray(host))


def _float_dtype(dtype) -> np.dtype:
    dtype = np.dtype(dtype)
    if dtype.kind != "f" or dtype.itemsize not in (4, 8):
        # CuPy's message: its float generators make float32 or float64 only.
        raise TypeError(f"cupy.random only supports float32 and float64, not {dtype}")
    return dtype


def rand(*size, dtype=float):
    return _device(_generator.random(size).astype(_float_dtype(dtype)))


def random_sample(size=None, dtype=float):
    return _device(np.asarray(_generator.random(size)).astype(_float_dtype(dtype)))


random = random_sample
ranf = random_sample
sample = random_sample


def randn(*size, dtype=float):
    return _device(_generator.standard_normal(size).astype(_float_dtype(dtype)))


def standard_normal(size=None, dtype=float):
    return _device(np.asarray(_generator.standard_normal(size)).astype(_float_dtype(dtype)))


def randint(low, high=None, size=None, dtype=int):
    if high is None:
        low, high = 0, low
    return _device(np.asarray(_generator.integers(low, high, size)).astype(dtype))


def uniform(low=0.0, high=1.0, size=None, dtype=float):
    return _device(np.asarray(_generator.uniform(low, high, size)).astype(_float_dtype(dtype)))


def normal(loc=0.0, scale=1.0, size=None, dtype=float):
    return _device(np.asarray(_generator.normal(loc, scale, size)).astype(_float_dtype(dtype)))


def permutation(num):
    from . import ndarray

    if isinstance(num, ndarray):
        return _device(_generator.permutation(num.get()))
    return _device(_generator.permutation(int(num)))


def shuffle(a) -> None:
    host = a.get()
    _generator.shuffle(host)
    a.set(host)


def choice(a, size=None, replace: bool = True, p=None):
    from . import ndarray

    population = a.get() if isinstance(a, ndarray) else a
    weights = p.get() if isinstance(p, ndarray) else p
    return _device(_generator.choice(population, size, replace, weights))


def __getattr__(name: str):
    if name.startswith("__"):
        raise AttributeError(name)
    raise NotImplementedError(f"cupy.random.{name} is not implemented in racetrack's CuPy face")
