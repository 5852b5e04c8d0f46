"""`from racetrack import cuda` as a drop-in for `from numba import cuda`: what tutorials use."""

import sys
import traceback

import numpy as np
import pytest

import racetrack
from racetrack._core import relative_path
from conftest import skip_without_the_numba_face

skip_without_the_numba_face()

from numba import float32, int32  # noqa: E402 (after the skip: Numba exists from Python 3.10)

from racetrack import cuda  # noqa: E402
from racetrack.cuda import random  # noqa: E402

WEIGHTS = np.array([0.5, 2.0, -1.0], dtype=np.float32)


@cuda.jit
def fill_3d(out):
    x, y, z = cuda.grid(3)
    if x < out.shape[0] and y < out.shape[1] and z < out.shape[2]:
        out[x, y, z] = x * 100 + y * 10 + z


def test_3d_grids_and_indices():
    out = np.zeros((4, 5, 6), np.int32)
    fill_3d[(1, 2, 2), (4, 3, 4)](out)
    want = np.fromfunction(lambda x, y, z: x * 100 + y * 10 + z, out.shape).astype(np.int32)
    assert np.array_equal(out, want)


@cuda.jit
def index_parts(out):
    i = cuda.threadIdx.x + cuda.blockIdx.x * cuda.blockDim.x
    if i < out.shape[0]:
        out[i, 0] = cuda.gridDim.x
        out[i, 1] = cuda.gridsize(1)
        out[i, 2] = cuda.grid(1)


def test_thread_block_and_grid_indices():
    out = np.zeros((100, 3), np.int64)
    index_parts[4, 32](out)
    assert (out[:, 0] == 4).all() and (out[:, 1] == 128).all()
    assert np.array_equal(out[:, 2], np.arange(100))


@cuda.jit
def atomics(x, ints, floats):
    i = cuda.grid(1)
    if i < x.size:
        cuda.atomic.add(ints, 0, x[i])
        cuda.atomic.max(ints, 1, x[i])
        cuda.atomic.min(ints, 2, x[i])
        cuda.atomic.exch(ints, 3, 7)
        cuda.atomic.cas(ints, 4, 0, i + 1)
        cuda.atomic.compare_and_swap(ints[5:], 0, i + 1)
        cuda.atomic.add(floats, 0, 0.5)
        cuda.atomic.max(floats, 1, float32(x[i]))


def test_the_atomic_family():
    x = np.random.default_rng(0).integers(-100, 100, 1000).astype(np.int32)
    ints = np.array([0, -1000, 1000, 0, 0, 0], np.int32)
    floats = np.array([0.0, -1e9], np.float32)
    atomics[8, 128](x, ints, floats)
    assert ints[0] == x.sum() and ints[1] == x.max() and ints[2] == x.min()
    assert ints[3] == 7
    assert 1 <= ints[4] <= 1000 and 1 <= ints[5] <= 1000
    assert floats[0] == 500.0 and floats[1] == x.max()


@cuda.jit(device=True)
def weighted(values, k):
    return values[k] * cuda.const.array_like(WEIGHTS)[k % 3]


@cuda.jit
def local_const_and_fences(x, out):
    t = cuda.threadIdx.x
    scratch = cuda.local.array(3, float32)
    for k in range(3):
        scratch[k] = weighted(x, t * 3 + k)
    cuda.syncwarp()
    cuda.threadfence()
    out[t] = scratch[0] + scratch[1] + scratch[2]


def test_local_and_constant_arrays_device_functions_and_fences():
    x = np.arange(96, dtype=np.float32)
    out = np.zeros(32, np.float32)
    local_const_and_fences[1, 32](x, out)
    assert np.array_equal(out, (x.reshape(32, 3) * WEIGHTS).sum(axis=1))


@cuda.jit
def add_one(a, b):
    i = cuda.grid(1)
    if i < a.size:
        b[i] = a[i] + 1


def test_device_arrays_streams_and_events():
    a = cuda.to_device(np.arange(50, dtype=np.float64))
    b = cuda.device_array_like(a)
    stream = cuda.stream()
    start, end = cuda.event(), cuda.event()
    start.record(stream)
    add_one[2, 32, stream](a, b)
    end.record(stream)
    end.synchronize()
    stream.synchronize()
    cuda.synchronize()
    assert np.array_equal(b.copy_to_host(), np.arange(50) + 1.0)
    assert cuda.event_elapsed_time(start, end) > 0
    host = np.zeros(50)
    cuda.device_array(50).copy_to_device(host)  # copy_to_device of a host array
    out = np.empty(50)
    b.copy_to_host(out)
    assert out[49] == 50.0


def test_reading_a_device_array_nothing_wrote_is_an_initcheck_finding():
    fresh = cuda.device_array(50, np.float64)
    with pytest.raises(racetrack.MemoryAccessError, match="uninitialized read"):
        add_one[2, 32](fresh, np.zeros(50))


def test_cuda_reduce():
    values = np.random.default_rng(1).random(10_000)
    total = cuda.reduce(lambda a, b: a + b)
    assert abs(total(values) - values.sum()) <= 1e-12 * values.size
    largest = cuda.Reduce(lambda a, b: max(a, b))
    assert largest(np.arange(777, dtype=np.int64)) == 776
    assert total(values, size=10) == pytest.approx(values[:10].sum())
    assert total(np.zeros(0)) == 0


@cuda.jit("void(float32[:], float32)")
def scale_in_place(x, a):
    i = cuda.grid(1)
    if i < x.size:
        x[i] *= a


def test_explicit_signatures_convert_scalars():
    x = np.ones(10, np.float32)
    scale_in_place[1, 32](x, 2.5)
    assert (x == 2.5).all()


@cuda.jit
def racy(x):
    x[0] = x[0] + 1


def test_a_race_raises_at_the_launch_line_with_racetrack_checks_text():
    x = np.zeros(1, np.int32)
    launch_line = sys._getframe().f_lineno + 2
    try:
        racy[4, 32](x)
    except racetrack.RaceError as error:
        frames = traceback.extract_tb(error.__traceback__)
        assert frames[0].lineno == launch_line and frames[0].filename == __file__
        text = str(error)
        count = len(error.findings)
        noun = "finding" if count == 1 else "findings"
        assert text.startswith(f"racy: {count} {noun} in the launch at {relative_path(__file__)}:{launch_line}")
        assert "race (" in text and "on global memory: x[0]" in text
        assert f"test_numba_face.py:{racy.py_func.__code__.co_firstlineno + 2}" in text
        assert isinstance(error, racetrack.FindingError)
    else:
        pytest.fail("the race was not reported")


def test_checking_collects_findings_and_follows_the_cli_options():
    x = np.zeros(1, np.int32)
    with racetrack.checking(raise_on_finding=False) as report:
        racy[4, 32](x)
        racy[1, 1](x)
    assert not report.clean and report.findings
    assert report.launches == [("racy", len(report.findings)), ("racy", 0)]
    with racetrack.checking(racecheck=False) as quiet:
        racy[4, 32](x)
    assert quiet.clean
    with racetrack.checking(raise_on_finding=False, schedule="adversarial", seed=9, memory_model="ptx", threads=1) as other:
        racy[4, 32](x)
    assert other.findings and other.findings[0].kind == "race"
    with pytest.raises(ValueError, match="schedule must be"):
        with racetrack.checking(schedule="sometimes"):
            pass


@cuda.jit
def diverge(out):
    if cuda.threadIdx.x < 16:
        cuda.syncthreads()
    out[cuda.threadIdx.x] = 1


def test_barrier_divergence_is_a_sync_error():
    with pytest.raises(racetrack.SyncError, match="barrier divergence"):
        diverge[1, 64](np.zeros(64, np.int32))


@cuda.jit
def exit_before_the_barrier(out):
    t = cuda.threadIdx.x
    if t < 32:
        cuda.syncthreads()
        out[t] = 1


def test_threads_that_exit_without_reaching_a_barrier_are_named_at_a_py_line():
    with pytest.raises(racetrack.SyncError) as raised:
        exit_before_the_barrier[1, 64](np.zeros(64, np.int32))
    text = str(raised.value)
    first = exit_before_the_barrier.py_func.__code__.co_firstlineno
    # The threads that skip the barrier are named at the line they left from: the `if` (Numba's
    # final `ret` has no line of its own).
    assert "PTX line" not in text, text
    assert f"exited without arriving (first exit) at {relative_path(__file__)}:{first + 3}" in text, text
    assert first + 3 in raised.value.lines


@cuda.jit
def reverse_without_a_barrier(x, out):
    shared = cuda.shared.array(64, float32)
    t = cuda.threadIdx.x
    shared[t] = x[t]
    out[t] = shared[63 - t]


def test_a_shared_array_named_like_a_ptx_word_keeps_its_python_name_and_lines_are_quoted():
    with pytest.raises(racetrack.RaceError) as raised:
        reverse_without_a_barrier[1, 64](np.ones(64, np.float32), np.zeros(64, np.float32))
    text = str(raised.value)
    assert "on shared memory: shared[63]" in text and "_cudapy_smem" not in text, text
    first = reverse_without_a_barrier.py_func.__code__.co_firstlineno
    path = relative_path(__file__)
    # Each line the finding names is quoted below it, as a Python traceback quotes a frame.
    assert f'  File "{path}", line {first + 4}\n    shared[t] = x[t]\n' in text, text
    assert f'  File "{path}", line {first + 5}\n    out[t] = shared[63 - t]' in text, text


@cuda.jit
def dynamic_shared(x, out):
    buffer = cuda.shared.array(0, int32)
    t = cuda.threadIdx.x
    buffer[t] = x[t]
    cuda.syncthreads()
    out[t] = buffer[x.size - 1 - t]


def test_dynamic_shared_memory_from_the_launch_configuration():
    x = np.arange(64, dtype=np.int32)
    out = np.zeros(64, np.int32)
    dynamic_shared[1, 64, 0, 64 * 4](x, out)
    assert np.array_equal(out, x[::-1])


def test_non_contiguous_host_arrays_are_staged_and_copied_back():
    base = np.zeros((10, 4))
    column = base[:, 1]
    add_one[1, 32](np.arange(10, dtype=np.float64), column)
    assert np.array_equal(base[:, 1], np.arange(10) + 1.0) and (base[:, 0] == 0).all()


def test_launching_without_a_configuration_says_how():
    with pytest.raises(TypeError, match=r"add_one\[blocks, threads\]"):
        add_one(np.zeros(1), np.zeros(1))


def test_device_array_views_indexing_and_assignment():
    host = np.arange(60, dtype=np.float64).reshape(6, 10)
    d = cuda.to_device(host)
    assert d[2, 3] == host[2, 3]
    assert np.array_equal(d[1:4].copy_to_host(), host[1:4])
    assert np.array_equal(d[:, 3].copy_to_host(), host[:, 3])
    assert np.array_equal(d[::2, 1::3].copy_to_host(), host[::2, 1::3])
    assert np.array_equal(d[..., -1].copy_to_host(), host[..., -1])
    d[0, 0] = -1.0
    d[5] = 7.0
    d[:, 9] = np.arange(6)
    want = host.copy()
    want[0, 0] = -1.0
    want[5] = 7.0
    want[:, 9] = np.arange(6)
    assert np.array_equal(d.copy_to_host(), want)
    # A strided view passed to a kernel: Numba's ABI carries its strides.
    column = d[:, 4]
    out = cuda.device_array(6)
    add_one[1, 32](column, out)
    assert np.array_equal(out.copy_to_host(), want[:, 4] + 1)
    assert d.reshape(60)[13] == want.reshape(60)[13]


def test_reduce_into_a_device_result():
    values = np.arange(100, dtype=np.int64)
    result = cuda.device_array(1, np.int64)
    assert cuda.reduce(lambda a, b: a + b)(values, res=result) is None
    assert result.copy_to_host()[0] == values.sum()


@cuda.jit
def monte_carlo_pi(states, hits):
    i = cuda.grid(1)
    if i < hits.size:
        x = random.xoroshiro128p_uniform_float32(states, i)
        y = random.xoroshiro128p_uniform_float32(states, i)
        hits[i] = 1 if x * x + y * y <= 1.0 else 0


def test_random_states_and_numbas_generators():
    n = 4096
    states = random.create_xoroshiro128p_states(n, seed=1)
    hits = np.zeros(n, np.int32)
    monte_carlo_pi[n // 128, 128](states, hits)
    # Binomial(n, pi/4): 5 standard deviations is about 0.064 of 4 * mean.
    assert abs(4 * hits.mean() - np.pi) < 5 * 4 * np.sqrt(np.pi / 4 * (1 - np.pi / 4) / n)


def test_numbas_own_random_module_makes_states_on_the_emulator():
    # Tutorials change only `from numba import cuda` and keep this line: Numba's module must
    # hand its host calls to the emulator, or they ask for a driver that is not there.
    from numba.cuda.random import create_xoroshiro128p_states, init_xoroshiro128p_states

    states = create_xoroshiro128p_states(64, seed=7)
    assert isinstance(states, cuda.DeviceNDArray)
    want = random.create_xoroshiro128p_states(64, seed=7).copy_to_host()
    assert states.copy_to_host().tobytes() == want.tobytes()
    again = cuda.device_array(64, dtype=random.xoroshiro128p_dtype)
    init_xoroshiro128p_states(again, seed=7)
    assert again.copy_to_host().tobytes() == want.tobytes()


def test_a_module_on_numbas_real_cuda_keeps_numbas_random(monkeypatch):
    import numba.cuda
    import numba.cuda.random as numbas_random

    calls = []
    monkeypatch.setattr(random, "_numbas_create", lambda *args: calls.append(args) or "numba's")
    module_on_real_numba = {"cuda": numba.cuda, "make": numbas_random.create_xoroshiro128p_states}
    assert eval("make(8, 3)", module_on_real_numba) == "numba's"
    assert calls == [(8, 3, 0, 0)]


@cuda.jit(cuda.types.void(cuda.types.CPointer(cuda.types.uint8), cuda.types.uint32))
def add_one_through_a_pointer(x, n):
    i = cuda.grid(1)
    if i < n:
        x[i] += 1


def test_a_raw_pointer_parameter_takes_a_device_address():
    # numba-cuda's CPointer example: the address from the CUDA Array Interface, as an int
    x = cuda.to_device(np.arange(10, dtype=np.uint8))
    address = x.__cuda_array_interface__["data"][0]
    add_one_through_a_pointer[1, 32](address, len(x))
    assert x.copy_to_host().tolist() == list(range(1, 11))
    # the memory checker still knows the allocation behind the bare address
    with pytest.raises(racetrack.MemoryAccessError, match=r"just past the end of"):
        add_one_through_a_pointer[1, 32](address, len(x) + 1)
    with pytest.raises(TypeError, match=r"argument 'x' is a float, but the kernel's signature says uint8\*"):
        add_one_through_a_pointer[1, 32](1.5, 4)


def test_cupy_and_numba_arrays_are_each_others_device_memory():
    # Through the CUDA Array Interface, as the real libraries share memory: no copies.
    import racetrack.cupy as cp

    @cuda.jit
    def add_one(x):
        i = cuda.grid(1)
        if i < x.size:
            x[i] += 1

    a = cp.arange(8, dtype=cp.float32)
    add_one[1, 32](a)
    add_one[1, 32](a[2:6])
    assert a.get().tolist() == [1, 2, 4, 5, 6, 7, 7, 8]
    d = cuda.to_device(np.arange(4.0))
    view = cp.asarray(d)
    view *= 10
    assert d.copy_to_host().tolist() == [0, 10, 20, 30]
    assert cuda.is_cuda_array(a) and cuda.as_cuda_array(a).shape == (8,)

    @cuda.jit
    def racy(total):
        total[0] += 1

    with pytest.raises(racetrack.RaceError, match=r"on global memory: total\[0\]"):
        racy[1, 32](cp.zeros(4, cp.float32))


def test_a_numba_call_the_face_lacks_is_not_implemented_by_name():
    # numba.cuda.open_ipc_array shares device memory between processes; the face has no
    # stand-in, and says so by name rather than as a misspelt attribute
    with pytest.raises(NotImplementedError, match=r"racetrack\.cuda\.open_ipc_array is not implemented"):
        cuda.open_ipc_array(None, (4,), np.float32)
    # a name Numba does not have either is an ordinary AttributeError
    with pytest.raises(AttributeError, match="no attribute 'declare_devise'"):
        cuda.declare_devise  # noqa: B018
    assert not hasattr(cuda, "declare_devise")


FOREIGN_MULTIPLY = """
#include <scale.cuh>
extern "C" __device__ int mul_f32_f32(float *result, float x, float y)
{
  *result = x * y * SCALE;
  return 0;
}
"""

FOREIGN_COUNTER = """
__device__ int total;
extern "C" __device__ int count_into(int *result, int x)
{
  total += x;
  *result = total;
  return 0;
}
"""


def test_copy_hints_choose_which_ways_a_host_array_is_copied():
    @cuda.jit
    def double_into(x, out):
        i = cuda.grid(1)
        if i < x.size:
            out[i] = 2 * x[i]
            x[i] = 0

    x = np.arange(8, dtype=np.int32)
    out = np.full(8, -1, np.int32)
    double_into[1, 8](cuda.In(x), cuda.Out(out))
    # In: the kernel's zeros stay on the device; Out: the result comes back
    assert x.tolist() == list(range(8)) and out.tolist() == [2 * v for v in range(8)]
    double_into[1, 8](cuda.InOut(x), out)
    assert x.tolist() == [0] * 8

    @cuda.jit
    def add_one(out):
        out[cuda.grid(1)] += 1

    # Out copies nothing in, so the kernel reads memory no one wrote
    with pytest.raises(racetrack.MemoryAccessError, match="uninitialized"):
        add_one[1, 4](cuda.Out(np.zeros(4, np.int32)))


def test_numbas_device_intrinsics_and_vector_types_are_the_faces():
    @cuda.jit
    def intrinsics(x):
        cuda.nanosleep(100)
        v = cuda.float32x4(1.0, 2.0, 3.0, 4.0)
        x[0] = cuda.ldcg(x, 1) + v.x + v.w + cuda.libdevice.sqrtf(np.float32(9.0))
        cuda.stcs(x, 2, np.float32(7.0))

    x = np.array([0, 10, 0, 0], np.float32)
    intrinsics[1, 1](x)
    assert x.tolist() == [18.0, 10.0, 7.0, 0.0]
    assert cuda.is_float16_supported()


def test_foreign_cuda_c_functions_are_linked_as_numba_links_them(tmp_path, monkeypatch):
    # numba-cuda's FFI example: declare_device with link=functions.cu, a header found through
    # config.CUDA_NVRTC_EXTRA_SEARCH_PATHS
    from numba.cuda import config

    (tmp_path / "include").mkdir()
    (tmp_path / "include" / "scale.cuh").write_text("#define SCALE 2.0f\n")
    functions = tmp_path / "functions.cu"
    functions.write_text(FOREIGN_MULTIPLY)
    monkeypatch.setattr(config, "CUDA_NVRTC_EXTRA_SEARCH_PATHS", str(tmp_path / "include"), raising=False)
    mul = cuda.declare_device("mul_f32_f32", "float32(float32, float32)", link=str(functions))

    @cuda.jit
    def multiply(r, x, y):
        i = cuda.grid(1)
        if i < r.size:
            r[i] = mul(x[i], y[i])

    x = np.arange(40, dtype=np.float32)
    y = np.full(40, 0.5, np.float32)
    r = np.zeros_like(x)
    multiply[2, 32](r, x, y)
    np.testing.assert_array_equal(r, x * y * 2)


def test_a_race_inside_a_foreign_function_is_named_at_its_cu_line(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "counter.cu").write_text(FOREIGN_COUNTER)
    count = cuda.declare_device("count_into", "int32(int32)", link="counter.cu")

    @cuda.jit
    def counting(out):
        i = cuda.grid(1)
        if i < out.size:
            out[i] = count(i)

    with pytest.raises(racetrack.RaceError, match=r"on global memory: total\[0\]\n.*at counter\.cu:5") as caught:
        counting[2, 32](np.zeros(64, np.int32))
    assert "total += x;" in str(caught.value)


def test_code_only_a_gpus_linker_takes_is_not_implemented_by_name(tmp_path):
    (tmp_path / "functions.o").write_bytes(b"\x7fELF")
    mul = cuda.declare_device("mul_from_an_object", "float32(float32, float32)", link=str(tmp_path / "functions.o"))

    @cuda.jit
    def multiply(r, x):
        r[0] = mul(x[0], x[0])

    with pytest.raises(NotImplementedError, match=r"functions\.o is a \.o file"):
        multiply[1, 1](np.zeros(1, np.float32), np.ones(1, np.float32))


def test_an_allocation_the_machine_cannot_hold_is_numbas_out_of_memory_error():
    from numba.cuda.cudadrv.driver import CudaAPIError

    with pytest.raises(CudaAPIError, match="CUDA_ERROR_OUT_OF_MEMORY") as caught:
        cuda.device_array(1 << 48, dtype=np.float32)
    assert caught.value.code == 2


def test_events_count_the_hosts_work_between_them():
    # As in the PyCUDA and CuPy faces: an idle stream's events count the host's time.
    import time

    start, end = cuda.event(), cuda.event()
    start.record()
    time.sleep(0.02)
    end.record()
    assert cuda.event_elapsed_time(start, end) >= 20
