"""Streams as CUDA orders them, in all three faces: a copy between the host and the device made
on a stream is queued there, and work on two streams that touches the same bytes with nothing
ordering them (an event wait, a host synchronization, the legacy default stream) is a race,
reported at the `.py` lines of both operations. Each test marks its lines with `# op:NAME`."""

from __future__ import annotations

import pathlib
import sys

import numpy as np
import pytest

import racetrack

THIS = pathlib.Path(__file__)


def line(name: str) -> int:
    """The line of this file marked `# op:name`."""
    marker = f"# op:{name}"
    found = [n for n, text in enumerate(THIS.read_text().splitlines(), 1) if text.rstrip().endswith(marker)]
    assert len(found) == 1, f"{marker} should mark exactly one line"
    return found[0]


def assert_stream_race(error: racetrack.RaceError, *ops: str) -> None:
    assert {f.kind for f in error.findings} == {"stream-race"}, str(error)
    queued = [at for _, at in error.queued_at]
    for op in ops:
        assert line(op) in queued, f"line {line(op)} (# op:{op}) not among {queued}:\n{error}"
        assert line(op) in error.lines
        # The report quotes the line, as a traceback does.
        assert f'{THIS.name}", line {line(op)}\n' in str(error), str(error)


# ---- Numba ----------------------------------------------------------------------------------

numba_only = pytest.mark.skipif(sys.version_info < (3, 10), reason="the Numba face needs Python >= 3.10")


@pytest.fixture(scope="module")
def scale_numba():
    from racetrack import cuda

    @cuda.jit
    def scale(x, factor):
        i = cuda.grid(1)
        if i < x.size:
            x[i] *= factor

    return cuda, scale


@numba_only
def test_numba_copy_on_one_stream_kernel_on_another_is_a_race(scale_numba):
    cuda, scale = scale_numba
    data = np.arange(256, dtype=np.float32)
    s1, s2 = cuda.stream(), cuda.stream()
    d = cuda.to_device(data, stream=s1)  # op:numba-to-device
    with pytest.raises(racetrack.RaceError) as raised:
        scale[2, 128, s2](d, 2.0)  # op:numba-launch
    assert_stream_race(raised.value, "numba-to-device", "numba-launch")
    assert "the copy to the device at" in str(raised.value)


@numba_only
def test_numba_copy_to_host_on_another_stream_is_a_race(scale_numba):
    cuda, scale = scale_numba
    d = cuda.to_device(np.ones(256, np.float32))
    s1, s2 = cuda.stream(), cuda.stream()
    scale[2, 128, s1](d, 2.0)  # op:numba-launch-then-read
    out = np.empty(256, np.float32)
    with pytest.raises(racetrack.RaceError) as raised:
        d.copy_to_host(out, stream=s2)  # op:numba-copy-to-host
    assert_stream_race(raised.value, "numba-launch-then-read", "numba-copy-to-host")


@numba_only
def test_numba_an_event_orders_the_copy_before_the_kernel(scale_numba):
    cuda, scale = scale_numba
    data = np.arange(256, dtype=np.float32)
    s1, s2 = cuda.stream(), cuda.stream()
    d = cuda.to_device(data, stream=s1)
    copied = cuda.event()
    copied.record(s1)
    copied.wait(s2)
    scale[2, 128, s2](d, 2.0)
    out = d.copy_to_host(stream=s2)
    s2.synchronize()
    np.testing.assert_array_equal(out, 2 * data)


@numba_only
def test_numba_one_stream_orders_its_own_work_and_a_bound_array_uses_its_stream(scale_numba):
    cuda, scale = scale_numba
    data = np.arange(256, dtype=np.float32)
    s = cuda.stream()
    d = cuda.to_device(data, stream=s).bind(s)
    scale[2, 128, s](d, 3.0)
    np.testing.assert_array_equal(d.copy_to_host(), 3 * data)  # on s, the stream it is bound to


@numba_only
def test_numba_a_synchronous_copy_waits_for_every_stream(scale_numba):
    cuda, scale = scale_numba
    d = cuda.to_device(np.ones(256, np.float32))
    s1, s2 = cuda.stream(), cuda.stream()
    scale[2, 128, s1](d, 2.0)
    np.testing.assert_array_equal(d.copy_to_host(), 2)  # the legacy default stream waits for s1
    scale[2, 128, s2](d, 2.0)  # and the host waited for it: ordered after s1's kernel
    np.testing.assert_array_equal(d.copy_to_host(), 4)


@numba_only
def test_numba_copy_races_are_collected_when_asked(scale_numba):
    cuda, scale = scale_numba
    s1, s2 = cuda.stream(), cuda.stream()
    d = cuda.to_device(np.ones(256, np.float32))
    with racetrack.checking(raise_on_finding=False) as report:
        scale[2, 128, s1](d, 2.0)
        d.copy_to_device(np.zeros(256, np.float32), stream=s2)
    assert [f.kind for f in report.findings] == ["stream-race"]
    assert "the copy to the device at" in report.findings[0].text


# ---- PyCUDA ---------------------------------------------------------------------------------

SCALE_C = """
__global__ void scale(float *x, float factor, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        x[i] *= factor;
}
"""


@pytest.fixture(scope="module")
def pycuda_scale():
    import racetrack.pycuda.autoinit  # noqa: F401
    import racetrack.pycuda.driver as drv
    from racetrack.pycuda.compiler import SourceModule

    return drv, SourceModule(SCALE_C).get_function("scale")


def test_pycuda_memcpy_htod_async_then_kernel_on_another_stream_is_a_race(pycuda_scale):
    drv, scale = pycuda_scale
    host = np.arange(256, dtype=np.float32)
    x = drv.mem_alloc(host.nbytes)
    s1, s2 = drv.Stream(), drv.Stream()
    drv.memcpy_htod_async(x, host, s1)  # op:pycuda-htod
    with pytest.raises(racetrack.RaceError) as raised:
        scale(x, np.float32(2), np.int32(256), block=(128, 1, 1), grid=(2, 1), stream=s2)  # op:pycuda-launch
    assert_stream_race(raised.value, "pycuda-htod", "pycuda-launch")


def test_pycuda_memcpy_dtoh_async_on_another_stream_is_a_race(pycuda_scale):
    drv, scale = pycuda_scale
    host = np.ones(256, dtype=np.float32)
    x = drv.to_device(host)
    s1, s2 = drv.Stream(), drv.Stream()
    scale(x, np.float32(2), np.int32(256), block=(128, 1, 1), grid=(2, 1), stream=s1)  # op:pycuda-writer
    with pytest.raises(racetrack.RaceError) as raised:
        drv.memcpy_dtoh_async(host, x, s2)  # op:pycuda-dtoh
    assert_stream_race(raised.value, "pycuda-writer", "pycuda-dtoh")


def test_pycuda_an_event_orders_the_streams(pycuda_scale):
    drv, scale = pycuda_scale
    data = np.arange(256, dtype=np.float32)
    host = data.copy()
    x = drv.mem_alloc(host.nbytes)
    s1, s2 = drv.Stream(), drv.Stream()
    drv.memcpy_htod_async(x, host, s1)
    copied = drv.Event().record(s1)
    s2.wait_for_event(copied)
    scale(x, np.float32(2), np.int32(256), block=(128, 1, 1), grid=(2, 1), stream=s2)
    drv.memcpy_dtoh_async(host, x, s2)
    s2.synchronize()
    np.testing.assert_array_equal(host, 2 * data)


def test_pycuda_the_legacy_default_stream_waits_for_blocking_streams_only(pycuda_scale):
    drv, scale = pycuda_scale
    host = np.ones(256, dtype=np.float32)
    x = drv.to_device(host)
    blocking = drv.Stream()
    scale(x, np.float32(2), np.int32(256), block=(128, 1, 1), grid=(2, 1), stream=blocking)
    drv.memcpy_dtoh(host, x)  # waits for the blocking stream's kernel: no race
    np.testing.assert_array_equal(host, 2)
    non_blocking = drv.Stream(flags=drv.stream_flags.NON_BLOCKING)
    scale(x, np.float32(2), np.int32(256), block=(128, 1, 1), grid=(2, 1), stream=non_blocking)  # op:pycuda-nb
    with pytest.raises(racetrack.RaceError) as raised:
        drv.memcpy_dtoh(host, x)  # op:pycuda-sync-copy
    assert_stream_race(raised.value, "pycuda-nb", "pycuda-sync-copy")


def test_pycuda_gpuarray_set_async_and_memset_async_queue_on_their_streams(pycuda_scale):
    drv, scale = pycuda_scale
    import racetrack.pycuda.gpuarray as gpuarray

    x = gpuarray.zeros(256, np.float32)
    s1, s2 = drv.Stream(), drv.Stream()
    x.set_async(np.ones(256, np.float32), stream=s1)  # op:pycuda-set-async
    with pytest.raises(racetrack.RaceError) as raised:
        drv.memset_d32_async(x.gpudata, 0, 256, s2)  # op:pycuda-memset
    assert_stream_race(raised.value, "pycuda-set-async", "pycuda-memset")
    s2.synchronize()
    s1.synchronize()
    got = x.get_async(stream=s2)
    np.testing.assert_array_equal(got, 0)


# ---- CuPy -----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def cupy_scale():
    import racetrack.cupy as cp

    return cp, cp.RawKernel('extern "C"' + SCALE_C, "scale")


def test_cupy_set_on_one_stream_kernel_on_another_is_a_race(cupy_scale):
    cp, scale = cupy_scale
    x = cp.empty(256, dtype=cp.float32)
    s1, s2 = cp.cuda.Stream(), cp.cuda.Stream()
    x.set(np.arange(256, dtype=np.float32), stream=s1)  # op:cupy-set
    with pytest.raises(racetrack.RaceError) as raised:
        scale((2,), (128,), (x, np.float32(2), np.int32(256)), stream=s2)  # op:cupy-launch
    assert_stream_race(raised.value, "cupy-set", "cupy-launch")


def test_cupy_a_launch_inside_with_stream_goes_on_that_stream(cupy_scale):
    cp, scale = cupy_scale
    x = cp.empty(256, dtype=cp.float32)
    s1, s2 = cp.cuda.Stream(), cp.cuda.Stream()
    x.set(np.arange(256, dtype=np.float32), stream=s1)  # op:cupy-set-then-with
    with s2:
        assert cp.cuda.get_current_stream() is s2
        with pytest.raises(racetrack.RaceError) as raised:
            scale((2,), (128,), (x, np.float32(2), np.int32(256)))  # op:cupy-launch-in-with
    assert cp.cuda.get_current_stream() is cp.cuda.Stream.null
    assert_stream_race(raised.value, "cupy-set-then-with", "cupy-launch-in-with")


def test_cupy_get_on_another_stream_is_a_race_and_an_event_fixes_it(cupy_scale):
    cp, scale = cupy_scale
    data = np.arange(256, dtype=np.float32)
    x = cp.asarray(data)
    s1, s2 = cp.cuda.Stream(non_blocking=True), cp.cuda.Stream(non_blocking=True)
    scale((2,), (128,), (x, np.float32(2), np.int32(256)), stream=s1)  # op:cupy-writer
    with pytest.raises(racetrack.RaceError) as raised:
        x.get(stream=s2)  # op:cupy-get
    assert_stream_race(raised.value, "cupy-writer", "cupy-get")
    cp.cuda.Device().synchronize()  # the host waits for both: what follows is ordered after

    scale((2,), (128,), (x, np.float32(2), np.int32(256)), stream=s1)
    done = s1.record()
    s2.wait_event(done)
    got = x.get(stream=s2)
    s2.synchronize()
    np.testing.assert_array_equal(got, 4 * data)


def test_cupy_a_synchronous_get_does_not_wait_for_a_non_blocking_stream(cupy_scale):
    cp, scale = cupy_scale
    x = cp.ones(256, dtype=cp.float32)
    blocking = cp.cuda.Stream()
    scale((2,), (128,), (x, np.float32(2), np.int32(256)), stream=blocking)
    np.testing.assert_array_equal(cp.asnumpy(x), 2)  # waits for the blocking stream
    non_blocking = cp.cuda.Stream(non_blocking=True)
    scale((2,), (128,), (x, np.float32(2), np.int32(256)), stream=non_blocking)  # op:cupy-nb
    with pytest.raises(racetrack.RaceError) as raised:
        cp.asnumpy(x)  # op:cupy-asnumpy
    assert_stream_race(raised.value, "cupy-nb", "cupy-asnumpy")
    cp.cuda.Device().synchronize()
    np.testing.assert_array_equal(cp.asnumpy(x), 4)


# ---- strided views: copies into and out of them queue on their stream too ---------------------


@numba_only
def test_numba_copy_to_host_of_a_strided_view_on_another_stream_is_a_race(scale_numba):
    cuda, scale = scale_numba
    d = cuda.to_device(np.ones(256, np.float32))
    column = d.reshape(16, 16)[:, 3]
    s1, s2 = cuda.stream(), cuda.stream()
    scale[2, 128, s1](d, 2.0)  # op:numba-writer-of-view
    with pytest.raises(racetrack.RaceError) as raised:
        column.copy_to_host(stream=s2)  # op:numba-view-to-host
    assert_stream_race(raised.value, "numba-writer-of-view", "numba-view-to-host")


@numba_only
def test_numba_copy_to_host_of_a_strided_view_on_its_stream_is_ordered(scale_numba):
    cuda, scale = scale_numba
    data = np.arange(256, dtype=np.float32)
    d = cuda.to_device(data)
    stream = cuda.stream()
    scale[2, 128, stream](d, 2.0)
    got = d.reshape(16, 16)[:, 3].copy_to_host(stream=stream)
    stream.synchronize()
    np.testing.assert_array_equal(got, 2 * data.reshape(16, 16)[:, 3])


def test_pycuda_set_async_into_a_strided_view_is_a_race_and_keeps_the_other_elements(pycuda_scale):
    drv, scale = pycuda_scale
    import racetrack.pycuda.gpuarray as gpuarray

    x = gpuarray.to_gpu(np.arange(256, dtype=np.float32))
    column = x.reshape(16, 16)[:, 3]
    s1, s2 = drv.Stream(), drv.Stream()
    column.set_async(np.full(16, -1, np.float32), stream=s1)  # op:pycuda-view-set-async
    with pytest.raises(racetrack.RaceError) as raised:
        scale(x.gpudata, np.float32(2), np.int32(256), block=(128, 1, 1), grid=(2, 1), stream=s2)  # op:pycuda-after-view
    assert_stream_race(raised.value, "pycuda-view-set-async", "pycuda-after-view")
    s1.synchronize()
    s2.synchronize()
    expected = 2 * np.arange(256, dtype=np.float32).reshape(16, 16)
    expected[:, 3] = -2
    np.testing.assert_array_equal(x.get().reshape(16, 16), expected)


def test_cupy_get_of_a_strided_view_on_another_stream_is_a_race_and_an_event_fixes_it(cupy_scale):
    cp, scale = cupy_scale
    data = np.arange(256, dtype=np.float32)
    x = cp.asarray(data)
    every_other = x[::2]
    s1, s2 = cp.cuda.Stream(non_blocking=True), cp.cuda.Stream(non_blocking=True)
    scale((2,), (128,), (x, np.float32(2), np.int32(256)), stream=s1)  # op:cupy-writer-of-view
    with pytest.raises(racetrack.RaceError) as raised:
        every_other.get(stream=s2)  # op:cupy-view-get
    assert_stream_race(raised.value, "cupy-writer-of-view", "cupy-view-get")
    cp.cuda.Device().synchronize()

    scale((2,), (128,), (x, np.float32(2), np.int32(256)), stream=s1)
    s2.wait_event(s1.record())
    got = every_other.get(stream=s2)
    s2.synchronize()
    np.testing.assert_array_equal(got, 4 * data[::2])


def test_cupy_elementwise_and_reduction_kernels_launch_on_the_current_stream(cupy_scale):
    cp, _ = cupy_scale
    double = cp.ElementwiseKernel("float32 x", "float32 y", "y = 2 * x", "double_it")
    total = cp.ReductionKernel("float32 x", "float32 y", "x", "a + b", "y = a", "0", "total")
    x = cp.empty(256, dtype=cp.float32)
    s1, s2 = cp.cuda.Stream(), cp.cuda.Stream()
    x.set(np.arange(256, dtype=np.float32), stream=s1)  # op:cupy-set-before-elementwise
    with s2:
        with pytest.raises(racetrack.RaceError) as raised:
            double(x)  # op:cupy-elementwise-on-s2
    assert_stream_race(raised.value, "cupy-set-before-elementwise", "cupy-elementwise-on-s2")
    cp.cuda.Device().synchronize()

    x.set(np.ones(256, dtype=np.float32), stream=s1)
    s2.wait_event(s1.record())
    with s2:
        doubled = double(x)
        summed = total(doubled)
    s2.synchronize()
    assert float(summed.get(stream=s2)) == 512.0
