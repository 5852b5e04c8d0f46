"""PyCUDA's prepared calls (`func.prepare("PfI")`, then `prepared_call(grid, block, *args)`,
`prepared_timed_call`, `prepared_async_call`) and the timing and shared-memory keywords of a
plain call, as PyCUDA's own behave, on the emulator."""

import re
import struct
import sys
import traceback

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

import racetrack
import racetrack.pycuda.autoinit  # noqa: F401
import racetrack.pycuda.driver as drv
from racetrack.pycuda import gpuarray
from racetrack.pycuda.compiler import SourceModule

KERNELS = SourceModule("""
struct Affine { float scale; int shift; };

__global__ void scale(float *x, float a, unsigned int n)
{
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = a * x[i];
}

__global__ void affine(int *x, Affine f, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = (int)(x[i] * f.scale) + f.shift;
}

__global__ void reverse_block(float *x)
{
    extern __shared__ float tile[];
    unsigned int t = threadIdx.x, base = blockIdx.x * blockDim.x;
    tile[t] = x[base + t];
    __syncthreads();
    x[base + t] = tile[blockDim.x - 1 - t];
}

__global__ void racy_total(const float *x, unsigned int n, float *total)
{
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        *total += x[i];
    }
}
""")


def on_device(host: np.ndarray) -> drv.DeviceAllocation:
    allocation = drv.mem_alloc(host.nbytes)
    drv.memcpy_htod(allocation, host)
    return allocation


def from_device(allocation, like: np.ndarray) -> np.ndarray:
    back = np.empty_like(like)
    drv.memcpy_dtoh(back, allocation)
    return back


def line_of(text: str) -> int:
    """The line of this file on which `text` stands (a kernel's line inside the string above)."""
    return next(n for n, line in enumerate(open(__file__).read().splitlines(), 1) if text in line)


@given(
    x=arrays(np.float32, st.integers(1, 700), elements=st.floats(-1e3, 1e3, width=32)),
    a=st.floats(-10, 10, width=32),
    threads=st.sampled_from([32, 64, 128, 256]),
)
def test_prepared_call_packs_python_numbers_by_the_format(x, a, threads):
    scale = KERNELS.get_function("scale").prepare("PfI")
    assert scale.arg_format == "PfI"
    x_gpu = on_device(x)
    blocks = -(-x.size // threads)
    # Python numbers, which a plain call refuses: the format says what C type each becomes.
    scale.prepared_call((blocks, 1), (threads, 1, 1), x_gpu, a, x.size)
    assert np.array_equal(from_device(x_gpu, x), np.float32(a) * x)


def test_prepare_takes_numpy_types_and_pointers_as_int_addresses():
    x = np.arange(40, dtype=np.int32)
    x_gpu = on_device(x)
    affine_type = np.dtype([("scale", np.float32), ("shift", np.int32)])
    f = np.zeros(1, affine_type)
    f["scale"], f["shift"] = 2.5, -3
    # np.intp and a structured dtype, as PyCUDA turns them into a format: 'l' (or 'q') and '8s'.
    affine = KERNELS.get_function("affine").prepare([np.intp, affine_type, np.int32])
    assert affine.arg_format == np.dtype(np.intp).char + "8si"
    affine.prepared_call((2, 1), (32, 1, 1), int(x_gpu), f[0], 40)
    assert from_device(x_gpu, x).tolist() == [int(v * 2.5) - 3 for v in range(40)]
    # 'P' takes an int address as well as a DeviceAllocation.
    y = np.ones(8, dtype=np.float32)
    y_gpu = on_device(y)
    KERNELS.get_function("scale").prepare("PfI").prepared_call((1, 1), (8, 1, 1), int(y_gpu), 3, 8)
    assert from_device(y_gpu, y).tolist() == [3.0] * 8


@pytest.mark.parametrize(
    "arg_format, message",
    [
        ("PiI", r"argument 1 of scale \(`float a`\) is a 32-bit float, but the format gives it 'i'.*use 'f'"),
        ("PdI", r"`float a`\) is a 32-bit float, but the format gives it 'd' \(8 bytes\)"),
        ("ffI", r"argument 0 of scale \(`float \*x`\) is a pointer.*use 'P'"),
        ("PfH", r"`unsigned int n`\) is a 4-byte integer.*'H' \(2 bytes\).*use 'i' or 'I'"),
        ("Pf", r"describes 2 arguments, but scale takes 3"),
        ("PfII", r"describes 4 arguments, but scale takes 3"),
    ],
)
def test_a_format_a_gpu_would_misread_is_refused_at_prepare(arg_format, message):
    with pytest.raises(TypeError, match=message) as caught:
        KERNELS.get_function("scale").prepare(arg_format)
    assert "\n" not in str(caught.value)


def test_values_the_format_cannot_pack_raise_struct_error_as_in_pycuda():
    scale = KERNELS.get_function("scale").prepare("PfI")
    x = gpuarray.to_gpu(np.ones(4, dtype=np.float32))
    with pytest.raises(
        struct.error, match=r"argument 2 of scale \(`unsigned int n`\), prepared as 'I'.*integer"
    ):
        scale.prepared_call((1, 1), (4, 1, 1), x.gpudata, 1.0, 4.5)
    with pytest.raises(struct.error, match=r"prepared as 'I': .*(out of range|0 <= number)"):
        scale.prepared_call((1, 1), (4, 1, 1), x.gpudata, 1.0, -1)
    with pytest.raises(struct.error, match=r"prepared as 'P'.*pass its \.gpudata"):
        scale.prepared_call((1, 1), (4, 1, 1), x, 1.0, 4)
    with pytest.raises(struct.error, match=r"In\(\) works in a plain call"):
        scale.prepared_call((1, 1), (4, 1, 1), drv.In(np.ones(4, np.float32)), 1.0, 4)
    with pytest.raises(struct.error, match=r"prepared as 'PfI', for 3 arguments; 2 given"):
        scale.prepared_call((1, 1), (4, 1, 1), x.gpudata, 1.0)
    with pytest.raises(TypeError, match=r"block must be a tuple such as \(128, 1, 1\), not list"):
        scale.prepared_call((1, 1), [4, 1, 1], x.gpudata, 1.0, 4)
    with pytest.raises(TypeError, match=r"unknown keyword arguments: shared"):
        scale.prepared_call((1, 1), (4, 1, 1), x.gpudata, 1.0, 4, shared=16)
    with pytest.raises(drv.LogicError, match=r"prepared_call of affine before prepare"):
        KERNELS.get_function("affine").prepared_call((1, 1), (4, 1, 1), x.gpudata, b"\0" * 8, 4)
    # Nothing ran: every refusal came before the launch.
    assert x.get().tolist() == [1.0] * 4


def test_a_race_through_prepared_call_is_reported_at_the_kernel_line_in_this_file():
    x = gpuarray.to_gpu(np.ones(64, dtype=np.float32))
    total = drv.mem_alloc(4)
    drv.memset_d32(total, 0, 1)
    racy_total = KERNELS.get_function("racy_total").prepare("PIP")
    with pytest.raises(racetrack.RaceError) as caught:
        launch_line = sys._getframe().f_lineno + 1
        racy_total.prepared_call((1, 1), (64, 1, 1), x.gpudata, 64, total)
    kernel_line = line_of("*total += x[i];")
    assert kernel_line in caught.value.lines
    text = str(caught.value)
    assert f"test_pycuda_prepared.py:{kernel_line}" in text
    assert text.startswith("racy_total: ")
    assert re.search(rf"in the launch at \S*test_pycuda_prepared\.py:{launch_line}\n", text), text
    # The allocation passed for `float *total` is named after it, as in a plain call.
    assert "total[0]" in text
    # The traceback is the launch line here and the one frame that re-raises the finding, not
    # Racetrack's frames down to the emulator.
    frames = traceback.extract_tb(caught.value.__traceback__)
    assert (frames[0].filename, frames[0].lineno) == (__file__, launch_line) and len(frames) <= 2


def test_prepared_timed_call_gives_the_emulators_seconds():
    scale = KERNELS.get_function("scale").prepare("PfI")
    small = on_device(np.ones(32, dtype=np.float32))
    large = on_device(np.ones(1 << 16, dtype=np.float32))
    start, end = drv.Event(), drv.Event()
    start.record()
    small_time = scale.prepared_timed_call((1, 1), (32, 1, 1), small, 2.0, 32)
    end.record()
    large_time = scale.prepared_timed_call((256, 1), (256, 1, 1), large, 2.0, 1 << 16)
    # A function giving seconds, as PyCUDA's: the launch's own, within the events around it.
    assert callable(small_time)
    assert 0 < small_time() <= end.time_since(start) * 1e-3
    assert 0 < small_time() < large_time()
    assert from_device(large, np.empty(1 << 16, np.float32)).tolist() == [2.0] * (1 << 16)


def test_time_kernel_gives_the_emulators_seconds():
    x = np.ones(1000, dtype=np.float32)
    start, end = drv.Event(), drv.Event()
    start.record()
    seconds = KERNELS.get_function("scale")(
        drv.InOut(x), np.float32(4), np.uint32(1000), block=(128, 1, 1), grid=(8, 1), time_kernel=True
    )
    end.record()
    assert 0 < seconds <= end.time_since(start) * 1e-3
    assert x.tolist() == [4.0] * 1000
    assert (
        KERNELS.get_function("scale")(drv.InOut(x), np.float32(1), np.uint32(1000), block=(1000, 1, 1))
        is None
    )
    with pytest.raises(ValueError, match=r"can't time the kernel on an asynchronous invocation"):
        KERNELS.get_function("scale")(
            drv.InOut(x),
            np.float32(1),
            np.uint32(1000),
            block=(1000, 1, 1),
            stream=drv.Stream(),
            time_kernel=True,
        )
    with pytest.raises(ValueError, match=r"extra keyword arguments: shared_size"):
        KERNELS.get_function("scale")(
            drv.InOut(x), np.float32(1), np.uint32(1000), block=(1000, 1, 1), shared_size=4
        )


@pytest.mark.parametrize("threads", [1, 33, 128])
def test_dynamic_shared_memory_through_shared_and_shared_size(threads):
    blocks = 3
    x = np.arange(blocks * threads, dtype=np.float32)
    want = x.reshape(blocks, threads)[:, ::-1].ravel()
    reverse = KERNELS.get_function("reverse_block")

    plain = x.copy()
    reverse(drv.InOut(plain), block=(threads, 1, 1), grid=(blocks, 1), shared=4 * threads)
    assert np.array_equal(plain, want)

    reverse.prepare("P")
    stream = drv.Stream()
    for on in (stream, None):
        x_gpu = on_device(x)
        reverse.prepared_async_call((blocks, 1), (threads, 1, 1), on, x_gpu, shared_size=4 * threads)
        stream.synchronize()
        assert np.array_equal(from_device(x_gpu, x), want)

    # Without the dynamic shared memory the kernel's tile has no room: memcheck says so.
    with pytest.raises(racetrack.MemoryAccessError, match=r"shared"):
        reverse.prepared_call((blocks, 1), (threads, 1, 1), on_device(x))
    with pytest.raises(TypeError, match=r"stream must be a drv.Stream or None, not tuple"):
        reverse.prepared_async_call((blocks, 1), (threads, 1, 1), (threads, 1, 1), on_device(x))


def test_get_elwise_module_builds_the_loop_its_caller_prepares():
    # PyCUDA's measure and gpu_scalar_mult examples: the scalars as one-element arrays, the
    # kernel prepared from the arguments' struct characters and launched on the array's splay.
    from racetrack.pycuda.elementwise import get_elwise_module
    from racetrack.pycuda.tools import ScalarArg, VectorArg

    arguments = [
        VectorArg(np.float32, "global_a"),
        VectorArg(np.float32, "x"),
        VectorArg(np.float32, "z"),
        ScalarArg(np.uintp, "n"),
    ]
    module = get_elwise_module(arguments, "z[i] = a*x[i]", "scaled", loop_prep="float a = *global_a")
    function = module.get_function("scaled")
    function.prepare("".join(argument.struct_char for argument in arguments))
    a = gpuarray.to_gpu(np.array([3], dtype=np.float32))
    x = gpuarray.to_gpu(np.arange(5000, dtype=np.float32))
    z = gpuarray.empty_like(x)
    assert (x._grid, x._block) == ((157, 1), (32, 1, 1))
    function.prepared_call(x._grid, x._block, a.gpudata, x.gpudata, z.gpudata, x.mem_size)
    assert np.array_equal(z.get(), 3 * np.arange(5000, dtype=np.float32))


def test_linear_combination_of_host_scalars_runs_and_of_gpu_scalars_fails_as_on_cuda_13():
    from racetrack.pycuda.elementwise import get_linear_combination_kernel

    function, texrefs = get_linear_combination_kernel(((False, np.float32, np.float32),) * 2, np.float32)
    x = gpuarray.to_gpu(np.ones(300, dtype=np.float32))
    y = gpuarray.to_gpu(np.full(300, 2, dtype=np.float32))
    z = gpuarray.empty_like(x)
    function.prepared_call(x._grid, x._block, 5.0, x.gpudata, 7.0, y.gpudata, z.gpudata, x.mem_size)
    assert texrefs == [] and np.array_equal(z.get(), np.full(300, 19, dtype=np.float32))
    # A GPU scalar is read through a texture reference, which CUDA 12 removed.
    with pytest.raises(drv.CompileError, match=r"summand 1 is a GPU scalar.*texture reference"):
        get_linear_combination_kernel(((False, np.float32, np.float32), (True, np.float32, np.float32)), np.float32)
