"""The chapters' contract, in Python: every fixed kernel matches NumPy on generated inputs, and
every broken one fails as documented, at its `# BUG` line."""

import os

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

import racetrack
from conftest import bug_line, skip_without_the_numba_face

# The chapters' examples are Numba kernels (`from racetrack import cuda`).
skip_without_the_numba_face()

import ch1_map  # noqa: E402
import ch2_reductions  # noqa: E402
import ch3_life  # noqa: E402
import ch4_atomics  # noqa: E402
import ch5_mutex_dot  # noqa: E402
import ch6_scans  # noqa: E402
import ch7_matmul  # noqa: E402

f32 = st.floats(-1e3, 1e3, width=32)
sizes = st.integers(1, 700)


def f32_array(size):
    return arrays(np.float32, size, elements=f32)


# ---- fixed kernels match NumPy ----


@given(st.data())
def test_ch1_scale_and_add_match_numpy(data):
    n = data.draw(sizes)
    x = data.draw(f32_array(n))
    y = data.draw(f32_array(n))
    a = data.draw(f32)
    assert np.array_equal(ch1_map.run_scale(x, a), np.float32(a) * x)
    assert np.array_equal(ch1_map.run_add(x, y), x + y)


@given(st.data())
def test_ch1_sigmoid_grid_stride_matches_numpy(data):
    x = data.draw(arrays(np.float64, data.draw(sizes), elements=st.floats(-30, 30)))
    blocks = data.draw(st.integers(1, 4))
    want = 1.0 / (1.0 + np.exp(-x))
    # libdevice's exp is within 2 ulp; 1/(1+e) adds a few more roundings.
    assert np.allclose(ch1_map.run_sigmoid(x, blocks), want, rtol=8 * np.finfo(np.float64).eps, atol=0)


@given(st.data())
def test_ch1_broadcast_add_matches_numpy(data):
    rows, cols = data.draw(st.integers(1, 40)), data.draw(st.integers(1, 40))
    matrix = data.draw(arrays(np.float32, (rows, cols), elements=f32))
    row = data.draw(f32_array(cols))
    assert np.array_equal(ch1_map.run_broadcast_add(matrix, row), matrix + row)


@given(st.data())
def test_ch2_tree_sum_matches_numpy(data):
    x = data.draw(arrays(np.float32, data.draw(sizes), elements=st.floats(0, 1, width=32)))
    partial = ch2_reductions.block_sums(x)
    for block, got in enumerate(partial):
        chunk = x[block * ch2_reductions.THREADS : (block + 1) * ch2_reductions.THREADS].astype(np.float64)
        # A tree of log2(128) = 7 float32 additions per element: error at most 7 eps sum|x|.
        assert abs(got - chunk.sum()) <= 7 * np.finfo(np.float32).eps * np.abs(chunk).sum()


@given(st.integers(1, 40), st.integers(1, 40), st.integers(0, 2**32 - 1))
def test_ch3_life_step_matches_numpy(rows, cols, seed):
    board = (np.random.default_rng(seed).random((rows, cols)) < 0.35).astype(np.int32)
    assert np.array_equal(ch3_life.step(board), ch3_life.step_numpy(board))


@given(st.integers(1, 12), st.integers(1, 96))
def test_ch4_atomic_increment_counts_every_thread(blocks, threads):
    assert ch4_atomics.increment(blocks, threads) == blocks * threads


@given(arrays(np.int32, st.integers(1, 3000), elements=st.integers(0, 10_000)), st.integers(1, 8))
def test_ch4_histograms_match_numpy(data, blocks):
    want = ch4_atomics.histogram_numpy(data)
    assert np.array_equal(ch4_atomics.histogram(data, ch4_atomics.histogram_global), want)
    assert np.array_equal(ch4_atomics.histogram(data, ch4_atomics.histogram_shared, blocks), want)


@given(st.data())
def test_ch5_dot_products_match_numpy_within_their_bound(data):
    n = data.draw(st.integers(1, 3000))
    x = data.draw(arrays(np.float32, n, elements=st.floats(-1, 1, width=32)))
    y = data.draw(arrays(np.float32, n, elements=st.floats(-1, 1, width=32)))
    blocks = data.draw(st.integers(1, 8))
    exact = float(x.astype(np.float64) @ y.astype(np.float64))
    bound = ch5_mutex_dot.error_bound(x, y)
    assert abs(ch5_mutex_dot.dot(x, y, blocks) - exact) <= bound
    assert abs(ch5_mutex_dot.dot_locked(x, y, blocks) - exact) <= bound


@given(arrays(np.int32, st.integers(1, ch6_scans.THREADS), elements=st.integers(-1000, 1000)))
def test_ch6_scan_matches_numpy(x):
    assert np.array_equal(ch6_scans.inclusive_scan(x), np.cumsum(x, dtype=np.int32))


@given(st.integers(1, 24), st.integers(1, 24), st.integers(1, 24), st.integers(0, 2**32 - 1))
def test_ch7_matmuls_match_numpy_within_their_bound(m, k, n, seed):
    rng = np.random.default_rng(seed)
    A = rng.uniform(-1, 1, (m, k)).astype(np.float32)
    B = rng.uniform(-1, 1, (k, n)).astype(np.float32)
    exact = A.astype(np.float64) @ B.astype(np.float64)
    for kernel in (ch7_matmul.matmul_naive, ch7_matmul.matmul_tiled):
        assert np.all(np.abs(ch7_matmul.matmul(A, B, kernel) - exact) <= ch7_matmul.error_bound(A, B))


# ---- broken kernels fail as documented, at their # BUG line ----

rng = np.random.default_rng(2024)
X1000 = rng.random(1000, dtype=np.float32)
Y1000 = rng.random(1000, dtype=np.float32)
BOARD = (rng.random((20, 30)) < 0.3).astype(np.int32)
DATA = rng.integers(0, 10_000, 3000).astype(np.int32)
SCAN = rng.integers(-50, 50, 200).astype(np.int32)
A = rng.random((20, 13), dtype=np.float32)
B = rng.random((13, 17), dtype=np.float32)

BROKEN = [
    (ch1_map.scale_no_guard, racetrack.MemoryAccessError, lambda: ch1_map.run_scale(X1000, 3, ch1_map.scale_no_guard)),
    (ch1_map.scale_thread_index_only, racetrack.RaceError, lambda: ch1_map.run_scale(X1000, 3, ch1_map.scale_thread_index_only)),
    (ch2_reductions.tree_sum_no_sync, racetrack.RaceError, lambda: ch2_reductions.total(X1000, ch2_reductions.tree_sum_no_sync)),
    (ch2_reductions.tree_sum_sync_in_if, racetrack.SyncError, lambda: ch2_reductions.total(X1000, ch2_reductions.tree_sum_sync_in_if)),
    (ch3_life.life_step_in_place, racetrack.RaceError, lambda: ch3_life.step_in_place(BOARD)),
    (ch4_atomics.racy_increment, racetrack.RaceError, lambda: ch4_atomics.increment(10, 16, ch4_atomics.racy_increment)),
    (ch4_atomics.histogram_no_atomics, racetrack.RaceError, lambda: ch4_atomics.histogram(DATA, ch4_atomics.histogram_no_atomics)),
    (
        ch4_atomics.histogram_shared_no_merge_barrier,
        racetrack.RaceError,
        lambda: ch4_atomics.histogram(DATA, ch4_atomics.histogram_shared_no_merge_barrier, 8),
    ),
    (ch5_mutex_dot.dot_plain_lock, racetrack.RaceError, lambda: ch5_mutex_dot.dot_locked(X1000, Y1000, 8, ch5_mutex_dot.dot_plain_lock)),
    (ch6_scans.hillis_steele_single_buffer, racetrack.RaceError, lambda: ch6_scans.inclusive_scan(SCAN, ch6_scans.hillis_steele_single_buffer)),
    (ch7_matmul.matmul_tiled_missing_sync, racetrack.RaceError, lambda: ch7_matmul.matmul(A, B, ch7_matmul.matmul_tiled_missing_sync)),
    (ch7_matmul.matmul_tiled_no_bounds, racetrack.MemoryAccessError, lambda: ch7_matmul.matmul(A, B, ch7_matmul.matmul_tiled_no_bounds)),
]


@pytest.mark.parametrize("kernel, error, run", BROKEN, ids=[case[0].__name__ for case in BROKEN])
def test_broken_kernel_fails_at_its_bug_line(kernel, error, run):
    with pytest.raises(error) as raised:
        run()
    line = bug_line(kernel)
    source = os.path.basename(kernel.py_func.__code__.co_filename)
    assert line in raised.value.lines, str(raised.value)
    assert f"{source}:{line}" in str(raised.value)
    # The same text as `racetrack check`: the finding's kind, the threads, why.
    assert raised.value.findings[0].text in str(raised.value)


def test_ch5_neighbour_typo_is_wrong_beyond_the_error_bound():
    exact = float(X1000.astype(np.float64) @ Y1000.astype(np.float64))
    got = ch5_mutex_dot.dot(X1000, Y1000, 8, ch5_mutex_dot.dot_neighbour_typo)
    assert abs(got - exact) > ch5_mutex_dot.error_bound(X1000, Y1000)


def test_fixed_kernels_are_clean_under_random_schedules():
    for seed in range(3):
        with racetrack.checking(schedule="random", seed=seed) as report:
            ch2_reductions.total(X1000)
            ch4_atomics.histogram(DATA, ch4_atomics.histogram_shared, 4)
            ch6_scans.inclusive_scan(SCAN)
        assert report.clean and len(report.launches) == 3
