"""`import racetrack.cupy as cp` for CuPy's RawKernel and RawModule: CUDA C written in the .py
file, reported at its .py lines."""

import pathlib

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

import racetrack
import racetrack.cupy as cp

import cupy_ch4_atomics as ch4

EXAMPLE = pathlib.Path(ch4.__file__)


def bug_lines():
    return [n for n, line in enumerate(EXAMPLE.read_text().splitlines(), 1) if "// BUG" in line]


@settings(max_examples=8, deadline=None, database=None)
@given(st.integers(1, 12), st.integers(1, 96))
def test_atomic_increment_counts_every_thread(blocks, threads):
    assert ch4.increment(blocks, threads) == blocks * threads


@settings(max_examples=8, deadline=None, database=None)
@given(arrays(np.int32, st.integers(1, 3000), elements=st.integers(0, 10_000)), st.integers(1, 8))
def test_shared_histogram_matches_numpy(data, blocks):
    assert np.array_equal(ch4.histogram(data, blocks), np.bincount(data % ch4.BINS, minlength=ch4.BINS))


@pytest.mark.parametrize(
    "run, bug",
    [
        (lambda: ch4.increment(10, 16, ch4.racy_increment), 0),
        (lambda: ch4.histogram(np.arange(3000, dtype=np.int32), 4, ch4.histogram_no_merge_barrier), 1),
    ],
    ids=["racy_increment", "histogram_no_merge_barrier"],
)
def test_broken_kernels_fail_at_their_bug_line_in_the_py_file(run, bug):
    with pytest.raises(racetrack.RaceError) as raised:
        run()
    line = bug_lines()[bug]
    assert line in raised.value.lines, str(raised.value)
    assert f"cupy_ch4_atomics.py:{line}" in str(raised.value)


SCALE = r"""
template <typename T> __global__ void scale(T *x, T a, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] *= a;
}
"""


def test_raw_module_templates_and_scalar_types():
    module = cp.RawModule(code=SCALE, name_expressions=["scale<float>", "scale<double>"])
    x = cp.asarray(np.arange(10, dtype=np.float32))
    module.get_function("scale<float>")((1,), (32,), (x, np.float32(3), np.int32(10)))
    assert np.array_equal(x.get(), np.arange(10, dtype=np.float32) * 3)
    y = cp.arange(10, dtype=cp.float64)
    module.get_function("scale<double>")((1,), (32,), (y, 0.5, 10))  # a Python float is a double
    assert np.array_equal(cp.asnumpy(y), np.arange(10) * 0.5)
    with pytest.raises(TypeError, match=r"pass numpy\.float32"):
        module.get_function("scale<float>")((1,), (32,), (x, 3.0, np.int32(10)))
    with pytest.raises(TypeError, match=r"pass numpy\.int32"):
        module.get_function("scale<float>")((1,), (32,), (x, np.float32(3), np.int64(10)))
    with pytest.raises(TypeError, match=r"cp\.asarray"):
        module.get_function("scale<float>")((1,), (32,), (np.zeros(10, np.float32), np.float32(3), 10))
    with pytest.raises(TypeError, match="takes 3 arguments"):
        module.get_function("scale<float>")((1,), (32,), (x,))


def test_array_helpers():
    assert np.array_equal(cp.asnumpy(cp.ones((2, 3), cp.int32)), np.ones((2, 3), np.int32))
    assert cp.zeros_like(cp.arange(4)).get().tolist() == [0, 0, 0, 0]
    empty = cp.empty(4, cp.float32)
    assert empty.shape == (4,) and empty.dtype == np.float32 and empty.data.ptr == empty.address
    cp.cuda.Device().synchronize()
    cp.cuda.runtime.deviceSynchronize()


def test_a_compile_error_names_the_py_line():
    with pytest.raises(racetrack.CompileError) as raised:
        cp.RawKernel(BROKEN_SOURCE, "broken")
    line = next(n for n, text in enumerate(pathlib.Path(__file__).read_text().splitlines(), 1) if "undeclared_name" in text and "BROKEN" not in text)
    assert f"test_cupy_face.py:{line}" in str(raised.value)


BROKEN_SOURCE = r"""
extern "C" __global__ void broken(int *x) {
    x[0] = undeclared_name;
}
"""
