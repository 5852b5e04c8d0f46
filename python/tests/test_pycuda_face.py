"""`racetrack.pycuda` for PyCUDA's SourceModule, driver and gpuarray: CUDA C written in the .py
file, reported at its .py lines."""

import pathlib

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

import racetrack
import racetrack.pycuda.autoinit  # noqa: F401
import racetrack.pycuda.driver as drv
from racetrack.pycuda import gpuarray
from racetrack.pycuda.compiler import SourceModule

import pycuda_ch2_reductions as ch2


@settings(max_examples=8, deadline=None, database=None)
@given(arrays(np.float32, st.integers(1, 700), elements=st.floats(0, 1, width=32)))
def test_tree_sum_matches_numpy(x):
    partial = ch2.block_sums(x)
    for block, got in enumerate(partial):
        chunk = x[block * ch2.THREADS : (block + 1) * ch2.THREADS].astype(np.float64)
        assert abs(got - chunk.sum()) <= 7 * np.finfo(np.float32).eps * np.abs(chunk).sum()


def test_the_tree_without_its_barrier_races_at_its_bug_line():
    with pytest.raises(racetrack.RaceError) as raised:
        ch2.block_sums(np.ones(1000, np.float32), ch2.tree_sum_no_sync)
    source = pathlib.Path(ch2.__file__).read_text().splitlines()
    line = next(n for n, text in enumerate(source, 1) if "// BUG" in text)
    assert line in raised.value.lines and f"pycuda_ch2_reductions.py:{line}" in str(raised.value)
    assert "on shared memory: cache[" in str(raised.value)


MULTIPLY = SourceModule("""
__global__ void multiply_them(float *dest, float *a, float *b, int n)
{
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) dest[i] = a[i] * b[i];
}
""")


def test_in_out_gpuarrays_and_allocations():
    multiply = MULTIPLY.get_function("multiply_them")
    a = np.random.default_rng(0).standard_normal(300).astype(np.float32)
    b = np.random.default_rng(1).standard_normal(300).astype(np.float32)
    dest = np.zeros_like(a)
    seconds = multiply(drv.Out(dest), drv.In(a), drv.In(b), np.int32(300), block=(128, 1, 1), grid=(3, 1), time_kernel=True)
    assert np.array_equal(dest, a * b) and seconds > 0
    ga, gb, gd = gpuarray.to_gpu(a), gpuarray.to_gpu(b), gpuarray.empty_like(gpuarray.to_gpu(a))
    multiply(gd, ga, gb, np.int32(300), block=(128, 1, 1), grid=(3, 1))
    assert np.array_equal(gd.get(), a * b)
    raw = drv.mem_alloc(a.nbytes)
    drv.memcpy_htod(raw, a)
    multiply(raw, raw, gb, np.int32(300), block=(128, 1, 1), grid=(3, 1))
    back = np.empty_like(a)
    drv.memcpy_dtoh(back, raw)
    assert np.array_equal(back, a * b)
    with pytest.raises(TypeError, match=r"drv\.In\(a\)"):
        multiply(dest, a, b, np.int32(300), block=(128, 1, 1), grid=(3, 1))
    assert np.array_equal(gpuarray.zeros(4, np.int32).fill(7).get(), [7, 7, 7, 7])


def test_no_extern_c_keeps_cpp_names():
    module = SourceModule(
        """
template <typename T> __global__ void twice(T *x) { x[threadIdx.x] *= 2; }
""",
        no_extern_c=True,
    )
    x = np.arange(8, dtype=np.float64)
    module.get_function("twice<double>")(drv.InOut(x), block=(8, 1, 1))
    assert np.array_equal(x, np.arange(8) * 2.0)
