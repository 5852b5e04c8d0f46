"""The chapters' contract, in Python: every fixed kernel matches NumPy on generated inputs, and
every broken one fails as documented, at its `# BUG` line."""

import os
import subprocess
import sys

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
import ch8_many_gpus  # noqa: E402

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


def test_ch1_thread_index_only_is_shown_wrong_by_its_result():
    # Every block stores the same values into the first elements, which no checker calls a race
    # (stores of the same bytes); the elements past the first block are never written.
    got = ch1_map.run_scale(X1000, 3, ch1_map.scale_thread_index_only)
    first_block = ch1_map.THREADS
    assert np.array_equal(got[:first_block], 3 * X1000[:first_block])
    assert not got[first_block:].any()


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


# ---- chapter 8: several devices (RACETRACK_DEVICES, 2 unless set) ----


# A ring and a peer need two devices; RACETRACK_DEVICES=1 leaves the chapter out, saying why.
needs_two_devices = pytest.mark.skipif(
    racetrack.device().device_count < 2, reason="chapter 8 needs RACETRACK_DEVICES >= 2"
)


def ring_inputs(ranks, n, seed, low=-1.0):
    rng = np.random.default_rng(seed)
    return [rng.uniform(low, 1, n).astype(np.float32) for _ in range(ranks)]


@needs_two_devices
@given(st.integers(0, 3000), st.integers(1, 4), st.integers(0, 2**32 - 1))
def test_ch8_split_sums_match_numpy_within_their_bound(n, blocks, seed):
    x = np.random.default_rng(seed).uniform(-1, 1, n).astype(np.float32)
    exact = float(x.astype(np.float64).sum())
    bound = ch8_many_gpus.split_sum_error_bound(x, blocks)
    assert abs(ch8_many_gpus.sum_by_copies(x, blocks) - exact) <= bound
    assert abs(ch8_many_gpus.sum_over_peers(x, blocks) - exact) <= bound


@needs_two_devices
@given(st.integers(1, 700), st.integers(1, 4), st.sampled_from([1, 32, 64, 100]), st.integers(0, 2**32 - 1))
def test_ch8_ring_all_reduce_matches_numpy_on_every_device(n, blocks, threads, seed):
    inputs = ring_inputs(len(racetrack.cuda.gpus), n, seed)
    outputs = ch8_many_gpus.all_reduce(inputs, blocks, threads)
    want = np.sum(np.asarray(inputs, np.float64), axis=0)
    bound = ch8_many_gpus.all_reduce_error_bound(inputs)
    for output in outputs:
        assert np.all(np.abs(output - want) <= bound)
        # Every device ends with the same bits: the all-gather copies one device's sums.
        assert np.array_equal(output.view(np.uint32), outputs[0].view(np.uint32))


@needs_two_devices
def test_ch8_ring_is_clean_under_random_schedules():
    inputs = ring_inputs(len(racetrack.cuda.gpus), 257, 8)
    for seed in range(2):
        with racetrack.checking(schedule="random", seed=seed) as report:
            ch8_many_gpus.all_reduce(inputs, 3, 32)
        assert report.clean and report.launches


@needs_two_devices
def test_ch8_ring_without_wait_races_across_devices_at_its_bug_line():
    kernel = ch8_many_gpus.ring_gather_without_wait
    with pytest.raises(racetrack.RaceError) as raised:
        ch8_many_gpus.all_reduce(ring_inputs(len(racetrack.cuda.gpus), 101, 3), gather_step=kernel, gather_waits=False)
    line = bug_line(kernel)
    assert f"ch8_many_gpus.py:{line}" in str(raised.value)
    assert {finding.kind for finding in raised.value.findings} == {"stream-race"}
    assert all(line in finding.lines for finding in raised.value.findings), str(raised.value)
    assert "between streams" in str(raised.value)
    # The other launch is named with the host line that queued it, and that line is quoted.
    other = [at for at in raised.value.queued_at if at[1] != line]
    assert other and all(path.endswith("ch8_many_gpus.py") for path, _ in other), str(raised.value)
    assert f"ring_reduce_step at {other[0][0]}:{other[0][1]} on device" in str(raised.value)


@needs_two_devices
def test_ch8_ring_gather_without_wait_is_clean_when_the_host_waits():
    # The broken kernel's body is the fixed one's: what breaks it is the host's missing wait.
    inputs = ring_inputs(len(racetrack.cuda.gpus), 101, 4)
    outputs = ch8_many_gpus.all_reduce(inputs, gather_step=ch8_many_gpus.ring_gather_without_wait)
    assert np.all(np.abs(outputs[0] - np.sum(inputs, axis=0, dtype=np.float64)) <= ch8_many_gpus.all_reduce_error_bound(inputs))


@needs_two_devices
@given(st.integers(1, 700), st.integers(0, 2**32 - 1))
def test_ch8_ring_wrong_offset_is_wrong_exactly_when_ranks_do_not_divide_n(n, seed):
    ranks = len(racetrack.cuda.gpus)
    # Positive values, so a value left out of the sum always shows.
    inputs = ring_inputs(ranks, n, seed, low=0.5)
    outputs = ch8_many_gpus.all_reduce(inputs, reduce_step=ch8_many_gpus.ring_reduce_wrong_offset)
    within = np.abs(outputs[0] - np.sum(inputs, axis=0, dtype=np.float64)) <= ch8_many_gpus.all_reduce_error_bound(inputs)
    if n % ranks:
        assert not within[-(n % ranks):].any()
    else:
        assert within.all()


NO_PEER_ACCESS = """
import numpy as np, racetrack, ch8_many_gpus
try:
    ch8_many_gpus.sum_over_peers(np.ones(1000, np.float32), 2, with_peer_access=False)
except racetrack.MemoryAccessError as error:
    print(error.findings[0].kind, error.lines, str(error).splitlines()[0])
"""


@needs_two_devices
def test_ch8_reading_a_peer_without_peer_access_is_a_memory_finding_at_the_read():
    # Peer access, once enabled, stays for the process (numba-cuda has no way to disable it):
    # a fresh interpreter reads device 1's block sums from device 0 without it.
    examples = os.path.dirname(ch8_many_gpus.__file__)
    ran = subprocess.run([sys.executable, "-c", NO_PEER_ACCESS], cwd=examples, capture_output=True, text=True,
                         env={**os.environ, "RACETRACK_DEVICES": "2"}, timeout=600)
    lines, first = __import__("inspect").getsourcelines(ch8_many_gpus.add_block_sums.py_func)
    read = first + next(i for i, text in enumerate(lines) if "acc += sums[j]" in text)
    assert ran.stdout.startswith(f"no-peer-access [{read}]"), ran.stdout + ran.stderr
    assert "add_block_sums" in ran.stdout


@needs_two_devices
def test_ch8_numba_device_api():
    cuda = racetrack.cuda
    assert len(cuda.gpus) == racetrack.device().device_count >= 2
    with cuda.gpus[1]:
        assert cuda.get_current_device().id == 1
        on_one = cuda.to_device(np.arange(5, dtype=np.float32))
        stream = cuda.stream()
    assert cuda.get_current_device().id == 0
    assert racetrack.device().device_of(on_one.address) == 1
    on_zero = cuda.device_array(5, np.float32)
    on_zero.copy_to_device(on_one)  # across devices: a copy needs no peer access
    assert np.array_equal(on_zero.copy_to_host(), np.arange(5, dtype=np.float32))
    with pytest.raises(ValueError, match="device 0 is current"):
        ch8_many_gpus.ring_gather_step[1, 32, stream](on_zero, on_zero, 0, 1)
    with pytest.raises(ValueError, match="does not exist"):
        cuda.select_device(len(cuda.gpus))
    assert [device.id for device in cuda.list_devices()] == list(range(len(cuda.gpus)))
    context = cuda.current_context()
    assert context.can_access_peer(1) and not context.can_access_peer(0)
    with pytest.raises(TypeError, match="handle"):
        context.enable_peer_access(cuda.gpus[1].get_primary_context())
