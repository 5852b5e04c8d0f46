"""The PyCUDA forms of the chapters' kernels: fixed ones match NumPy on generated inputs, broken
ones raise at their BUG line in the example's `.py` file."""


import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

import racetrack
from cuda_c_markers import assert_reported_at, load

EPS32 = float(np.finfo(np.float32).eps)

histogram = load("pycuda_ch4_histogram")
reduction = load("pycuda_ch2_reduction")
# The book's "From Python" page shows this one.
reductions = load("pycuda_ch2_reductions")
saxpy = load("pycuda_ch1_saxpy")


@given(
    data=arrays(np.uint8, st.integers(1, 3000), elements=st.integers(0, 255)),
    blocks=st.integers(1, 6),
)
def test_ch4_shared_histogram_matches_numpy(data, blocks):
    assert np.array_equal(
        histogram.histogram(data, "histogram_shared", blocks), np.bincount(data, minlength=256)
    )


def test_ch4_racy_histogram_raises_at_its_bug_line():
    with pytest.raises(racetrack.RaceError) as caught:
        histogram.histogram(np.zeros(512, dtype=np.uint8), "histogram_racy")
    assert_reported_at(caught.value, "pycuda_ch4_histogram", "void histogram_racy(")
    assert "histo[0]" in str(caught.value)


def sum_bound(x: np.ndarray, terms_per_thread: int, levels: int) -> float:
    """Recursive summation's bound: each float32 addition on a path to the result rounds once,
    and a path has at most `terms_per_thread` sequential additions plus one per tree level."""
    return (terms_per_thread + levels + 1) * EPS32 * float(np.abs(x.astype(np.float64)).sum())


@given(
    x=arrays(np.float32, st.integers(1, 2000), elements=st.floats(-1e3, 1e3, width=32)),
    blocks=st.integers(1, 5),
)
def test_ch2_tree_sum_matches_numpy(x, blocks):
    sums = reduction.block_sums(x, "tree_sum", blocks)
    terms = -(-x.size // (blocks * reduction.THREADS))
    exact = float(x.astype(np.float64).sum())
    assert abs(float(sums.astype(np.float64).sum()) - exact) <= sum_bound(x, terms, 7)


@given(x=arrays(np.float32, st.integers(1, 3000), elements=st.floats(-1e3, 1e3, width=32)))
def test_ch2_reduction_kernel_matches_numpy(x):
    from racetrack.pycuda.reduction import BLOCK, MAX_BLOCKS

    blocks = min(MAX_BLOCKS, -(-x.size // BLOCK))
    terms = -(-x.size // (blocks * BLOCK))
    # The first pass's loop and tree (8 levels), then the second pass's one term and tree.
    exact = float(x.astype(np.float64).sum())
    assert abs(reduction.reduction_kernel_sum(x) - exact) <= sum_bound(x, terms + 1 + 8, 8)


def test_ch2_tree_without_barrier_raises_at_its_bug_line():
    x = np.ones(reduction.THREADS * 2, dtype=np.float32)
    with pytest.raises(racetrack.RaceError) as caught:
        reduction.block_sums(x, "tree_no_sync", 2)
    assert_reported_at(caught.value, "pycuda_ch2_reduction", "void tree_no_sync(")


@given(x=arrays(np.float32, st.integers(1, 2000), elements=st.floats(-1e3, 1e3, width=32)))
def test_ch2_book_tree_sum_matches_numpy_block_by_block(x):
    partial = reductions.block_sums(x)
    threads = reductions.THREADS
    assert partial.shape == (-(-x.size // threads),)
    for block, got in enumerate(partial):
        chunk = x[block * threads : (block + 1) * threads].astype(np.float64)
        # One load per thread, then 7 tree levels: each rounds once on a path to the sum.
        assert abs(float(got) - float(chunk.sum())) <= sum_bound(chunk, 1, 7)


@given(x=arrays(np.float32, st.integers(1, 2000), elements=st.floats(-1e3, 1e3, width=32)))
def test_ch2_book_prepared_call_gives_the_plain_calls_sums(x):
    # The same kernel on the same inputs: the same sums, bit for bit (block_sums is held to
    # NumPy above).
    assert np.array_equal(reductions.block_sums_prepared(x), reductions.block_sums(x))


def test_ch2_book_prepare_refuses_a_float_for_the_int_count():
    with pytest.raises(TypeError, match=r"`int n`\) is a 4-byte integer, but the format gives it 'f'"):
        reductions.module.get_function("tree_sum").prepare("PfP")


def test_ch2_book_tree_without_barrier_raises_at_its_bug_line():
    x = np.ones(reductions.THREADS * 3, dtype=np.float32)
    with pytest.raises(racetrack.RaceError) as caught:
        reductions.block_sums(x, reductions.tree_sum_no_sync)
    assert_reported_at(caught.value, "pycuda_ch2_reductions", "void tree_sum_no_sync(")
    # What the book's page says it reports.
    assert "cache[32]" in str(caught.value)


@given(
    data=st.data(),
    n=st.integers(1, 2500),
)
def test_ch1_elementwise_saxpy_matches_numpy(data, n):
    x = data.draw(arrays(np.float32, n, elements=st.floats(-1e3, 1e3, width=32)))
    y = data.draw(arrays(np.float32, n, elements=st.floats(-1e3, 1e3, width=32)))
    a = data.draw(st.floats(-10, 10, width=32))
    got = saxpy.run(a, x, y)
    # NVRTC may fuse a*x + y into one fma (one rounding where NumPy rounds twice).
    want = np.float32(a) * x + y
    bound = EPS32 * (np.abs(np.float32(a) * x) + np.abs(y))
    assert np.all(np.abs(got.astype(np.float64) - want.astype(np.float64)) <= bound)


def test_ch1_elementwise_out_of_bounds_raises_at_its_python_line():
    x = np.arange(300, dtype=np.float32)
    with pytest.raises(racetrack.MemoryAccessError) as caught:
        saxpy.run(2.0, x, x, saxpy.saxpy_shifted)
    assert_reported_at(caught.value, "pycuda_ch1_saxpy", "saxpy_shifted = ElementwiseKernel(")
