"""The CuPy forms of the chapters' kernels: fixed ones match NumPy on generated inputs, broken
ones raise at their `// BUG` line in the example's `.py` file."""


import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

import racetrack
from cuda_c_markers import assert_reported_at, load

EPS32 = float(np.finfo(np.float32).eps)

counter = load("cupy_ch4_counter")
block_sum = load("cupy_ch2_block_sum")
scan = load("cupy_ch6_scan")
# The book's "From Python" page shows this one.
atomics = load("cupy_ch4_atomics")


@given(
    x=arrays(np.float32, st.integers(1, 3000), elements=st.floats(0, 1, width=32)),
    threshold=st.floats(0, 1, width=32),
)
def test_ch4_atomic_counter_matches_numpy(x, threshold):
    assert counter.count_above(x, threshold) == int((x > np.float32(threshold)).sum())


def test_ch4_racy_counter_raises_at_its_bug_line():
    with pytest.raises(racetrack.RaceError) as caught:
        counter.count_above(np.ones(256, dtype=np.float32), 0.5, counter.count_racy)
    assert_reported_at(caught.value, "cupy_ch4_counter", "void count_racy(")


@given(
    x=arrays(np.float32, st.integers(1, 2000), elements=st.floats(-1e3, 1e3, width=32)),
    blocks=st.integers(1, 5),
)
def test_ch2_block_sums_match_numpy(x, blocks):
    sums = block_sum.block_sums(x, "tree_sum", blocks)
    terms = -(-x.size // (blocks * block_sum.THREADS))
    exact = float(x.astype(np.float64).sum())
    # Each float32 addition on a path to the result rounds once: the loop's, then 7 levels.
    bound = (terms + 8) * EPS32 * float(np.abs(x.astype(np.float64)).sum())
    assert abs(float(sums.astype(np.float64).sum()) - exact) <= bound


def test_ch2_barrier_in_if_raises_sync_error_at_its_bug_line():
    with pytest.raises(racetrack.SyncError) as caught:
        block_sum.block_sums(np.ones(500, dtype=np.float32), "tree_sync_in_if", 2)
    assert_reported_at(caught.value, "cupy_ch2_block_sum", "void tree_sync_in_if(")


@given(x=arrays(np.int32, st.integers(1, 1024), elements=st.integers(-1000, 1000)))
def test_ch6_double_buffer_scan_matches_numpy(x):
    assert np.array_equal(scan.inclusive_scan(x), np.cumsum(x, dtype=np.int32))


def test_ch6_single_buffer_scan_raises_at_its_bug_line():
    with pytest.raises(racetrack.RaceError) as caught:
        scan.inclusive_scan(np.arange(200, dtype=np.int32), "scan_single_buffer")
    assert_reported_at(caught.value, "cupy_ch6_scan", "void scan_single_buffer(")


@given(blocks=st.integers(1, 12), threads=st.integers(1, 256))
def test_ch4_book_atomic_increment_counts_every_thread(blocks, threads):
    assert atomics.increment(blocks, threads) == blocks * threads


@pytest.mark.parametrize("blocks, threads", [(10, 16), (2, 128)])
def test_ch4_book_racy_increment_raises_at_its_bug_line(blocks, threads):
    with pytest.raises(racetrack.RaceError) as caught:
        atomics.increment(blocks, threads, atomics.racy_increment)
    assert_reported_at(caught.value, "cupy_ch4_atomics", "void racy_increment(")


@given(
    data=arrays(np.int32, st.integers(1, 3000), elements=st.integers(0, 10**6)),
    blocks=st.integers(1, 6),
)
def test_ch4_book_shared_histogram_matches_numpy(data, blocks):
    assert np.array_equal(
        atomics.histogram(data, blocks), np.bincount(data % atomics.BINS, minlength=atomics.BINS)
    )


def test_ch4_book_histogram_merged_without_barrier_raises_at_its_bug_line():
    data = np.arange(2000, dtype=np.int32)
    with pytest.raises(racetrack.RaceError) as caught:
        atomics.histogram(data, 4, atomics.histogram_no_merge_barrier)
    assert_reported_at(caught.value, "cupy_ch4_atomics", "void histogram_no_merge_barrier(")
