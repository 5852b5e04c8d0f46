"""What else a Numba user reaches for: `@cuda.vectorize`/`@cuda.guvectorize`, mapped and managed
memory, structured (record) arrays and record arguments, and grid sync (`cuda.cg.this_grid()`,
launched cooperatively). Fixed kernels match NumPy on generated inputs; broken ones are reported
at their `# BUG` line."""

import re
import traceback

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

import racetrack
from conftest import bug_line, skip_without_the_numba_face

skip_without_the_numba_face()

from racetrack import cuda  # noqa: E402  (after the skip: on Python 3.9 there is no Numba face)

import grid_sync  # noqa: E402
import memory_kinds  # noqa: E402
import records  # noqa: E402
import ufuncs  # noqa: E402

def inside_numba(frames):
    return [frame for frame in frames if "numba_cuda" in frame.filename or "/numba/" in frame.filename]


F32 = np.finfo(np.float32).eps
F64 = np.finfo(np.float64).eps
#: A rounding among subnormals is off by up to half their spacing, however small the result.
TINY32 = np.finfo(np.float32).smallest_subnormal
TINY64 = np.finfo(np.float64).smallest_subnormal
f32 = st.floats(-1e3, 1e3, width=32)
sizes = st.integers(1, 600)


def finding_lines(report, category):
    return {line for finding in report.findings if finding.category == category for line in finding.lines}


# ---- @cuda.vectorize ----


@given(st.data())
def test_vectorize_on_host_arrays_and_scalars_matches_numpy(data):
    n = data.draw(sizes)
    x = data.draw(arrays(np.float32, n, elements=f32))
    y = data.draw(arrays(np.float32, n, elements=f32))
    a = np.float32(data.draw(f32))
    got = ufuncs.scaled_add(a, x, y)
    assert got.dtype == np.float32 and got.shape == x.shape
    exact = np.float64(a) * x + y.astype(np.float64)
    # One rounding (a fused multiply-add) or two (NumPy's): within an ulp of each part.
    assert np.all(np.abs(got - exact) <= F32 * (np.abs(np.float64(a) * x) + np.abs(y)) + TINY32)


@given(st.data())
def test_vectorize_broadcasts_rows_and_scalars_as_numpy_does(data):
    rows, cols = data.draw(st.integers(1, 30)), data.draw(st.integers(1, 30))
    matrix = data.draw(arrays(np.float64, (rows, cols), elements=st.floats(-1e3, 1e3)))
    row = data.draw(arrays(np.float64, cols, elements=st.floats(-1e3, 1e3)))
    a = data.draw(st.floats(-1e3, 1e3))
    got = ufuncs.scaled_add(a, matrix, row)
    assert got.shape == (rows, cols)
    assert np.all(np.abs(got - (a * matrix + row)) <= 2 * F64 * (np.abs(a * matrix) + np.abs(row)) + 2 * TINY64)
    column = matrix[:, :1]
    on_device = ufuncs.scaled_add(np.float64(a), cuda.to_device(matrix), cuda.to_device(column))
    assert isinstance(on_device, cuda.DeviceNDArray)
    bound = 2 * F64 * (np.abs(a * matrix) + np.abs(column)) + 2 * TINY64
    assert np.all(np.abs(on_device.copy_to_host() - (a * matrix + column)) <= bound)


@given(arrays(np.int32, sizes, elements=st.integers(0, ufuncs.LEVELS - 1)))
def test_vectorize_reads_a_constant_table(levels):
    assert np.array_equal(ufuncs.brightness(levels), ufuncs.brightness_numpy(levels))


def test_vectorize_with_out_stream_device_arrays_and_reduce():
    x = np.arange(40, dtype=np.float32).reshape(5, 8)
    out = np.zeros_like(x)
    stream = cuda.stream()
    returned = ufuncs.scaled_add(np.float32(3), x, np.float32(1), out=out, stream=stream)
    stream.synchronize()
    assert np.array_equal(out, 3 * x + 1) and np.shares_memory(returned, out)
    d_out = cuda.device_array(x.shape, np.float32)
    ufuncs.scaled_add(np.float32(2), cuda.to_device(x), cuda.to_device(x), out=d_out)
    assert np.array_equal(d_out.copy_to_host(), 3 * x)

    @cuda.vectorize(["int64(int64, int64)"])
    def add(a, b):
        return a + b

    values = np.arange(1, 100, dtype=np.int64) ** 2
    assert add.reduce(values) == values.sum()
    assert add.reduce(cuda.to_device(values[:7])) == values[:7].sum()


def test_vectorize_wrong_types_are_one_line_ending_at_the_call():
    with pytest.raises(TypeError, match="No matching version") as caught:
        ufuncs.scaled_add(np.int32(1), np.zeros(4, np.int32), np.zeros(4, np.int32))
    assert "\n" not in str(caught.value)
    assert not inside_numba(traceback.extract_tb(caught.value.__traceback__))
    with pytest.raises(TypeError, match="needs its signatures"):
        cuda.vectorize(lambda a: a)


def test_vectorize_lookup_past_the_table_is_reported_at_the_bug_line():
    levels = np.arange(ufuncs.LEVELS, dtype=np.int32)
    with pytest.raises(racetrack.MemoryAccessError, match="out-of-bounds") as caught:
        ufuncs.brightness_of_next_level(levels)
    assert bug_line(ufuncs.brightness_of_next_level) in caught.value.lines
    head = str(caught.value).splitlines()[0]  # the launch is named at the call's own line
    assert head.startswith("brightness_of_next_level: ") and "test_numba_extras.py:" in head


# ---- @cuda.guvectorize ----


@given(st.data())
def test_guvectorize_row_dot_matches_numpy(data):
    rows, n = data.draw(st.integers(1, 60)), data.draw(st.integers(1, 40))
    x = data.draw(arrays(np.float32, (rows, n), elements=f32))
    y = data.draw(arrays(np.float32, (rows, n), elements=f32))
    got = ufuncs.row_dot(x, y)
    products = x.astype(np.float64) * y
    assert got.shape == (rows,)
    # n float32 roundings of a running sum: at most n eps of the sum of |products|.
    bound = (n + 1) * (F32 * np.abs(products).sum(axis=1) + TINY32)
    assert np.all(np.abs(got - products.sum(axis=1)) <= bound)


@given(st.data())
def test_guvectorize_running_sum_matches_numpy(data):
    rows, n = data.draw(st.integers(1, 50)), data.draw(st.integers(1, 30))
    x = data.draw(arrays(np.int32, (rows, n), elements=st.integers(-10_000, 10_000)))
    assert np.array_equal(ufuncs.running_sum(x), np.cumsum(x, axis=1, dtype=np.int32))
    one_row = x[0]
    assert np.array_equal(ufuncs.running_sum(one_row), np.cumsum(one_row, dtype=np.int32))


def test_guvectorize_with_out_device_arrays_and_a_broadcast_input():
    x = np.arange(24, dtype=np.float64).reshape(6, 4)
    weights = np.array([1.0, -2.0, 0.5, 3.0])
    out = np.zeros(6)
    ufuncs.row_dot(x, np.broadcast_to(weights, x.shape), out=out)
    assert np.array_equal(out, x @ weights)
    d_out = cuda.device_array(6)
    ufuncs.row_dot(cuda.to_device(x), cuda.to_device(weights), out=d_out)  # one row for all
    assert np.array_equal(d_out.copy_to_host(), x @ weights)
    sums = ufuncs.running_sum(cuda.to_device(np.ones((3, 5), np.int64)))
    assert isinstance(sums, cuda.DeviceNDArray)
    assert np.array_equal(sums.copy_to_host(), np.tile(np.arange(1, 6), (3, 1)))


def test_guvectorize_scalar_inputs_one_for_all_or_one_per_row():
    @cuda.guvectorize(["void(float64[:], float64, float64[:])"], "(n),()->(n)")
    def scale_rows(x, factor, out):
        for i in range(x.shape[0]):
            out[i] = factor * x[i]

    x = np.arange(12.0).reshape(3, 4)
    assert np.array_equal(scale_rows(x, 2.0), 2.0 * x)
    factors = np.array([1.0, -2.0, 0.5])
    assert np.array_equal(scale_rows(x, factors), factors[:, None] * x)
    assert np.array_equal(scale_rows(cuda.to_device(x), 0.5).copy_to_host(), 0.5 * x)


def test_guvectorize_running_past_the_row_races_at_the_bug_line():
    with racetrack.checking(raise_on_finding=False) as report:
        ufuncs.running_sum_past_the_row(np.ones((6, 8), np.int32))
    assert bug_line(ufuncs.running_sum_past_the_row) in finding_lines(report, "race")
    assert any("race" in finding.text and "out[" in finding.text for finding in report.findings)


# ---- mapped and managed memory ----


@given(arrays(np.float32, sizes, elements=f32))
def test_a_mapped_counter_is_read_by_the_host_without_a_copy(x):
    assert memory_kinds.count_positive_mapped(x) == int((x > 0).sum())


@given(arrays(np.float32, sizes, elements=f32), f32, f32)
def test_managed_memory_is_clamped_in_place(values, low, high):
    low, high = min(low, high), max(low, high)
    assert np.array_equal(memory_kinds.clamp_managed(values, low, high), np.clip(values, low, high))


@given(arrays(np.float64, sizes, elements=st.floats(-1e6, 1e6)), st.floats(-8, 8))
def test_a_numpy_array_mapped_for_a_launch_is_scaled_in_place(values, factor):
    want = values * factor
    same = memory_kinds.scale_mapped(values, factor)
    assert same is values and np.array_equal(values, want)


def test_mapped_arrays_are_numpy_arrays_both_sides_see():
    mapped = cuda.mapped_array(10, np.float32)
    assert isinstance(mapped, np.ndarray) and isinstance(mapped, cuda.MappedNDArray)
    mapped[:] = np.arange(10)
    memory_kinds.scale_in_place[1, 32](mapped[2:5], np.float32(10))  # a view: its own part only
    cuda.synchronize()
    assert np.array_equal(mapped, [0, 1, 20, 30, 40, 5, 6, 7, 8, 9])
    mapped[0] = -1  # a host write the next launch sees
    memory_kinds.scale_in_place[1, 32](mapped, np.float32(2))
    assert mapped[0] == -2 and mapped[9] == 18
    assert type(mapped + 1) is cuda.MappedNDArray and np.array_equal(mapped + 1, np.asarray(mapped) + 1)
    managed = cuda.managed_array((2, 3), np.int64)
    assert isinstance(managed, cuda.ManagedNDArray) and managed.shape == (2, 3)


def test_cuda_mapped_gives_device_arrays_over_the_host_arrays():
    a, b = np.arange(5, dtype=np.float64), np.ones(3, np.float64)
    with cuda.mapped(a, b) as (d_a, d_b):
        memory_kinds.scale_in_place[1, 32](d_a, 2.0)
        assert np.array_equal(a, np.arange(5) * 2.0)  # no copy asked for
        b[1] = 7.0  # a host write the device sees
        assert d_b[1] == 7.0 and np.array_equal(d_b.copy_to_host(), [1.0, 7.0, 1.0])
        d_b[2] = 3.0  # a device-side write the host sees
        assert b[2] == 3.0


def test_device_array_streams_split_squeeze_view_and_bind():
    stream = cuda.stream()
    d = cuda.device_array(10, np.float32, stream=stream)
    d.copy_to_device(np.arange(10, dtype=np.float32), stream=stream)
    parts = list(d.split(4))
    assert [p.copy_to_host().tolist() for p in parts] == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]
    parts[1][0] = 40.0  # views of the same memory
    assert d[4] == 40.0
    assert d.reshape(2, 1, 5).squeeze().shape == (2, 5)
    assert np.array_equal(d.view(np.int32).copy_to_host(), d.copy_to_host().view(np.int32))
    assert d.bind(stream).stream is stream
    with pytest.raises(ValueError, match="only support 1d"):
        next(d.reshape(2, 5).split(2))


def test_a_racy_count_into_mapped_memory_is_reported_at_the_bug_line():
    x = np.ones(300, np.float32)
    with pytest.raises(racetrack.RaceError) as caught:
        memory_kinds.count_positive_mapped(x, memory_kinds.count_positive_racy)
    assert bug_line(memory_kinds.count_positive_racy) in caught.value.lines
    assert "counter[0]" in str(caught.value)


# ---- structured (record) arrays ----


@given(st.integers(1, 500), st.integers(1, 30), st.integers(0, 2**32 - 1))
def test_records_advance_matches_numpy(n, steps, seed):
    start = records.random_particles(n, wall=100, seed=seed)
    moved = records.simulate(start, 1, 100, steps)
    assert moved.dtype == records.PARTICLE
    assert np.array_equal(moved, records.simulate_numpy(start, 1, 100, steps))
    assert records.count_bounces(moved) == int(moved["bounces"].sum())


def test_a_record_argument_is_written_back():
    particles = records.random_particles(1, wall=10)
    particles["bounces"] = 5
    tally = np.zeros(1, records.TALLY)
    records.total_bounces_into_record[1, 1](particles, tally[0])  # one thread: no race
    assert tally[0]["bounces"] == 5


def test_a_racy_sum_into_a_record_field_is_reported_at_the_bug_line():
    particles = records.random_particles(200, wall=100)
    # Counts that differ, so the threads' stores differ too: stores of one value are no
    # write-write race, and this record's read-modify-write is reported through them.
    particles["bounces"] = np.arange(1, 201)
    with pytest.raises(racetrack.RaceError, match=r"tally\[4\]") as caught:
        records.count_bounces_into_record(particles)
    assert bug_line(records.total_bounces_into_record) in caught.value.lines


# ---- grid sync ----


@given(st.integers(2, 500), st.integers(0, 12), st.integers(0, 2**32 - 1))
def test_steps_separated_by_grid_syncs_match_numpy(n, steps, seed):
    rod = np.random.default_rng(seed).uniform(0, 100, n)
    got = grid_sync.diffuse_rod(rod, steps)
    want = grid_sync.diffuse_numpy(rod, steps)
    # Numba may contract a * b + c into one fused multiply-add: within a rounding per step.
    np.testing.assert_allclose(got, want, rtol=8 * (steps + 1) * F64, atol=1e-12)


def test_a_grid_sync_orders_the_blocks_phases():
    x = np.random.default_rng(3).standard_normal(1000)
    with racetrack.checking(raise_on_finding=False) as report:
        got = grid_sync.blur_squares(x)
    assert report.findings == []
    np.testing.assert_allclose(got, grid_sync.blur_squares_numpy(x), rtol=4 * F64)


def test_a_block_barrier_in_place_of_a_grid_sync_is_a_race_at_the_read():
    x = np.random.default_rng(4).standard_normal(1000)
    with pytest.raises(racetrack.RaceError, match=r"squares\[") as caught:
        grid_sync.blur_squares(x, grid_sync.blur_after_block_barrier)
    assert bug_line(grid_sync.blur_after_block_barrier) in caught.value.lines
    # Only threads at a block's edge read another block's squares.
    indices = {int(index) for finding in caught.value.findings for index in re.findall(r"squares\[(\d+)\]", finding.text)}
    assert indices and all(i % grid_sync.THREADS in (0, grid_sync.THREADS - 1) for i in indices), indices


@cuda.jit
def shift_after_returning_early(x, out):
    i = cuda.grid(1)
    if i >= x.size:
        return
    grid = cuda.cg.this_grid()
    x[i] += 1
    grid.sync()  # BUG: the threads past the end returned and never arrive
    out[i] = x[(i + 1) % x.size]


def test_threads_that_return_before_a_grid_sync_are_reported_at_the_sync_line():
    # As at a __syncthreads() (and at CUDA C's grid sync, whose block barriers these are): a
    # barrier some of the block's threads exited before reaching is a finding.
    x, out = np.zeros(40, np.int32), np.zeros(40, np.int32)
    with pytest.raises(racetrack.SyncError, match="barrier divergence") as caught:
        shift_after_returning_early[2, 32](x, out)
    assert bug_line(shift_after_returning_early) in caught.value.lines
    assert "PTX line" not in str(caught.value).split("exited")[0]


@cuda.jit
def shift_after_grid_sync(x, out):
    grid = cuda.cg.this_grid()
    i = cuda.grid(1)
    x[i] += 1
    grid.sync()
    out[i] = x[(i + 1) % x.size]


def test_a_grid_sync_on_a_stream_runs_with_the_streams_order():
    stream = cuda.stream()
    x = cuda.to_device(np.arange(96, dtype=np.int32), stream=stream)
    out = cuda.device_array(96, np.int32, stream=stream)
    for _ in range(3):  # each launch its own grid workspace, each after the one before
        shift_after_grid_sync[3, 32, stream](x, out)
    stream.synchronize()
    np.testing.assert_array_equal(out.copy_to_host(), np.roll(np.arange(96) + 3, -1))
    cuda.synchronize()


def test_a_cooperative_grid_is_limited_by_the_kernels_registers_as_on_a_gpu():
    from numba.cuda.cudadrv.driver import CudaAPIError

    grid_sync.diffuse_rod(np.zeros(100), 1)
    signature = grid_sync.diffuse.signatures[0]
    registers, _static_shared = grid_sync.diffuse._resources(signature)
    if registers is None:
        pytest.skip("no ptxas here (`racetrack doctor --fetch` brings nvcc's), so registers are not counted")
    most = grid_sync.diffuse.overloads[signature].max_cooperative_grid_blocks(grid_sync.THREADS)
    # An H100 with the real Numba answered 2,640 (20 blocks of 64 threads an SM); counting
    # threads alone gave 4,224 (the 32-block cap).
    assert most == 2640, registers
    rods = np.zeros((2, (most + 1) * grid_sync.THREADS))
    with pytest.raises(CudaAPIError, match=f"at most {most} blocks"):
        grid_sync.diffuse[most + 1, grid_sync.THREADS](rods, 1, 0.25)


def test_a_grid_too_large_to_be_resident_is_refused_as_numbas_launch_refuses_it():
    from numba.cuda.cudadrv.driver import CudaAPIError

    x, out = np.zeros(64, np.int32), np.zeros(64, np.int32)
    shift_after_grid_sync[2, 32](x, out)
    np.testing.assert_array_equal(out, np.roll(x, -1))
    most = shift_after_grid_sync.overloads[shift_after_grid_sync.signatures[0]].max_cooperative_grid_blocks(1024)
    assert most == 2 * 132  # two blocks of 1024 threads on each of an H100's 132 SMs
    x, out = np.zeros(1024 * (most + 1), np.int32), np.zeros(1024 * (most + 1), np.int32)
    with pytest.raises(CudaAPIError, match="CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE") as caught:
        shift_after_grid_sync[most + 1, 1024](x, out)
    assert caught.value.code == 720
    assert "\n" not in str(caught.value)
    assert not inside_numba(traceback.extract_tb(caught.value.__traceback__))
    assert not out.any()  # nothing ran
