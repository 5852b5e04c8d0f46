"""`racetrack.cupy.ElementwiseKernel` and `ReductionKernel`: CuPy's generated kernels, run on the
emulator and checked against NumPy; their races and bad indices are found like a RawKernel's."""

import pathlib

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import racetrack
from racetrack import cupy as cp

HERE = pathlib.Path(__file__).name


def line_of(marker: str) -> int:
    """The line of this file that holds ``marker``."""
    lines = pathlib.Path(__file__).read_text().splitlines()
    return next(number for number, line in enumerate(lines, start=1) if marker in line)

BLEND = cp.ElementwiseKernel(
    "float32 p, float32 q, float32 w",
    "float32 r",
    "r = w * p + (1.0f - w) * q",
    "blend",
)

CUBE_PLUS = cp.ElementwiseKernel("T v, T k", "T out", "out = v * v * v + k", "cube_plus")

SHIFTED = cp.ElementwiseKernel(
    "T v, raw T table",
    "T out",
    "out = v + table[(i + 1) % _ind.size()]",
    "shifted",
)

SPLIT_SIGN = cp.ElementwiseKernel(
    "T v",
    "T below, T above",
    """
    below = v < 0 ? v : (T)0;
    above = v > 0 ? v : (T)0;
    """,
    "split_sign",
)

SUM_OF_SQUARES = cp.ReductionKernel("T v", "T total", "v * v", "a + b", "total = a", "0", "sum_of_squares")

WEIGHTED_DOT = cp.ReductionKernel(
    "float32 u, float32 w",
    "float64 result",
    "(double)u * (double)w",
    "a + b",
    "result = a",
    "0",
    "weighted_dot",
)

LARGEST = cp.ReductionKernel("T v", "T top", "v", "max(a, b)", "top = a", "-1e30", "largest")


def test_elementwise_broadcasts_rows_and_scalars_as_numpy_does():
    grid = np.arange(12, dtype=np.float32).reshape(3, 4)
    row = np.linspace(-1, 1, 4).astype(np.float32)
    got = BLEND(cp.asarray(grid), cp.asarray(row), 0.25)
    assert got.shape == (3, 4) and got.dtype == np.float32
    np.testing.assert_allclose(got.get(), 0.25 * grid + 0.75 * row, rtol=1e-6)


def test_elementwise_placeholder_takes_the_arrays_dtype_and_scalars_follow():
    for dtype in (np.int32, np.float64):
        values = np.arange(-3, 5).astype(dtype)
        got = CUBE_PLUS(cp.asarray(values), 2)
        assert got.dtype == dtype
        np.testing.assert_array_equal(got.get(), values**3 + 2)


def test_elementwise_writes_the_outputs_given_and_returns_them():
    values = np.array([-2.0, 0.0, 3.5, -0.5])
    below, above = cp.zeros(4), cp.zeros(4)
    got = SPLIT_SIGN(cp.asarray(values), below, above)
    assert got[0] is below and got[1] is above
    np.testing.assert_array_equal(below.get(), np.minimum(values, 0))
    np.testing.assert_array_equal(above.get(), np.maximum(values, 0))


def test_raw_argument_is_indexed_by_the_operation():
    values = np.arange(6, dtype=np.float32)
    table = (np.arange(6, dtype=np.float32) + 1) * 100
    got = SHIFTED(cp.asarray(values), cp.asarray(table))
    np.testing.assert_array_equal(got.get(), values + np.roll(table, -1))


def test_elementwise_reads_strided_views_through_their_strides():
    grid = np.arange(20, dtype=np.float64).reshape(4, 5)
    on_device = cp.asarray(grid)
    # A transposed view (5, 4) against a reversed column (4,), broadcast as a row.
    got = CUBE_PLUS(on_device.T, on_device[::-1, 2])
    np.testing.assert_array_equal(got.get(), grid.T**3 + grid[::-1, 2])


@given(
    shape=st.lists(st.integers(1, 5), min_size=1, max_size=3).map(tuple),
    data=st.data(),
)
def test_elementwise_matches_numpy_for_generated_shapes(shape, data):
    # The second operand is the first's shape with some axes set to 1 or dropped in front.
    other = tuple(1 if data.draw(st.booleans()) else extent for extent in shape)
    other = other[data.draw(st.integers(0, len(other) - 1)) :]
    first = np.arange(np.prod(shape), dtype=np.float32).reshape(shape) - 7
    second = np.arange(np.prod(other), dtype=np.float32).reshape(other) * 0.5
    got = BLEND(cp.asarray(first), cp.asarray(second), np.float32(0.5))
    np.testing.assert_allclose(got.get(), 0.5 * first + 0.5 * second, rtol=1e-6)


def test_mismatched_array_dtype_is_cupys_type_error():
    with pytest.raises(TypeError, match="Type is mismatched"):
        BLEND(cp.zeros(4), cp.zeros(4, cp.float32), 0.5)  # float64 for a float32 parameter
    with pytest.raises(TypeError, match="Type is mismatched"):
        CUBE_PLUS(cp.zeros(4, cp.int32), cp.zeros(4, cp.int64))  # two dtypes for one T


def test_output_of_another_shape_and_unbroadcastable_inputs_raise_value_error():
    with pytest.raises(ValueError, match="Out shape is mismatched"):
        SPLIT_SIGN(cp.zeros((2, 4)), cp.zeros(4), cp.zeros((2, 4)))  # the loop is (2, 4)
    with pytest.raises(ValueError, match="broadcast"):
        BLEND(cp.zeros(4, cp.float32), cp.zeros(3, cp.float32), 0.5)


def test_host_arrays_are_refused_as_cupy_refuses_them():
    with pytest.raises(TypeError, match="Unsupported type"):
        CUBE_PLUS(np.zeros(4), 1)


def test_reduction_over_axes_and_keepdims_matches_numpy():
    values = np.arange(24, dtype=np.float64).reshape(2, 3, 4) - 5
    on_device = cp.asarray(values)
    full = SUM_OF_SQUARES(on_device)
    assert full.shape == ()
    assert float(full.get()) == pytest.approx(float((values**2).sum()))
    for axis in (0, 1, 2, -1, (0, 2), (1, 2)):
        for keepdims in (False, True):
            got = SUM_OF_SQUARES(on_device, axis=axis, keepdims=keepdims)
            want = (values**2).sum(axis=axis, keepdims=keepdims)
            assert got.shape == want.shape
            np.testing.assert_allclose(got.get(), want)


def test_reduction_with_its_own_output_type_and_a_max():
    u = np.linspace(0, 1, 1000).astype(np.float32)
    w = np.linspace(2, 3, 1000).astype(np.float32)
    got = WEIGHTED_DOT(cp.asarray(u), cp.asarray(w))
    assert got.dtype == np.float64
    assert float(got.get()) == pytest.approx(float(np.dot(u.astype(np.float64), w.astype(np.float64))))
    values = np.array([[3, 9, -1], [7, 2, 8]], dtype=np.float32)
    np.testing.assert_array_equal(LARGEST(cp.asarray(values), axis=1).get(), values.max(axis=1))


def test_reduction_axis_out_of_range_is_numpys_axis_error():
    with pytest.raises(IndexError, match="out of bounds"):  # AxisError is an IndexError too
        SUM_OF_SQUARES(cp.zeros((2, 3)), axis=2)


def test_a_raw_index_out_of_bounds_is_found_at_the_operation_line():
    reach_past = cp.ElementwiseKernel(
        "T v, raw T table",
        "T out",
        "out = v + table[i + 1]",  # BUG: reads one past the table
        "reach_past",
    )
    with pytest.raises(racetrack.MemoryAccessError) as found:
        reach_past(cp.zeros(8, cp.float32), cp.zeros(8, cp.float32))
    line = line_of("# BUG: reads one past the table")
    assert line in found.value.lines and f"{HERE}:{line}" in str(found.value), found.value


def test_two_elements_writing_one_place_is_a_race_at_the_operation_line():
    everyone_writes_first = cp.ElementwiseKernel(
        "T v",
        "raw T sink",
        "sink[0] = v",  # BUG: every element writes sink[0]
        "everyone_writes_first",
    )
    with pytest.raises(racetrack.RaceError) as found:
        everyone_writes_first(cp.arange(64, dtype=cp.float32), cp.zeros(1, cp.float32))
    line = line_of("# BUG: every element writes sink[0]")
    assert line in found.value.lines and f"{HERE}:{line}" in str(found.value), found.value


def test_generated_source_is_shown():
    CUBE_PLUS(cp.arange(3, dtype=cp.int32), 1)
    assert "cube_plus" in CUBE_PLUS.source and "out = v * v * v + k" in CUBE_PLUS.source


def test_complex_arrays_and_scalars_as_cupys_complex():
    rotate = cp.ElementwiseKernel("T z, T w", "T out", "out = z * w + T(0, 1)", "rotate")
    total = cp.ReductionKernel("T z", "T s", "z * z", "a + b", "s = a", "T(0, 0)", "square_sum")
    values = (np.linspace(-1, 1, 7) + 1j * np.arange(7)).astype(np.complex64)
    got = rotate(cp.asarray(values), np.complex64(0.5 - 2j))
    assert got.dtype == np.complex64
    np.testing.assert_allclose(got.get(), values * (0.5 - 2j) + 1j, rtol=1e-6)
    wide = values.astype(np.complex128)
    np.testing.assert_allclose(complex(total(cp.asarray(wide)).get()), (wide * wide).sum())
