"""`racetrack.pycuda`: what a PyCUDA script calls behaves as PyCUDA's, on the emulator."""

import numpy as np
import pytest

import racetrack
import racetrack.pycuda.autoinit  # noqa: F401
import racetrack.pycuda.driver as drv
from racetrack.pycuda import gpuarray
from racetrack.pycuda.compiler import SourceModule
from racetrack.pycuda.elementwise import ElementwiseKernel
from racetrack.pycuda.reduction import ReductionKernel

SCALE = SourceModule("""
__global__ void scale(float *x, float a, unsigned int n)
{
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        x[i] = a * x[i];
    }
}

__global__ void racy_sum(const float *x, unsigned int n, float *total)
{
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        *total += x[i];
    }
}
""")


def test_in_out_and_numpy_scalars():
    x = np.arange(100, dtype=np.float32)
    out = x.copy()
    SCALE.get_function("scale")(
        drv.InOut(out), np.float32(3), np.uint32(x.size), block=(32, 1, 1), grid=(4, 1)
    )
    assert np.array_equal(out, 3 * x)


def test_mem_alloc_and_memcpy():
    x = np.linspace(0, 1, 77).astype(np.float32)
    x_gpu = drv.mem_alloc(x.nbytes)
    drv.memcpy_htod(x_gpu, x)
    SCALE.get_function("scale")(x_gpu, np.float32(-2), np.uint32(x.size), block=(64, 1, 1), grid=(2, 1))
    drv.Context.synchronize()
    back = np.empty_like(x)
    drv.memcpy_dtoh(back, x_gpu)
    assert np.array_equal(back, np.float32(-2) * x)


def test_gpuarray_argument_and_arithmetic():
    x = gpuarray.to_gpu(np.arange(10, dtype=np.float32))
    SCALE.get_function("scale")(x, np.float32(2), np.uint32(10), block=(16, 1, 1))
    assert np.array_equal(x.get(), 2 * np.arange(10, dtype=np.float32))
    assert np.array_equal((x + x).get(), 4 * np.arange(10, dtype=np.float32))
    assert np.array_equal((1 + x * 2).get(), 1 + 4 * np.arange(10, dtype=np.float32))
    assert gpuarray.zeros(5, np.int32).get().tolist() == [0] * 5
    assert gpuarray.empty_like(x).shape == (10,)
    assert float(gpuarray.sum(x).get()) == 90.0


def test_python_int_is_refused_as_pycuda_refuses_it():
    x = gpuarray.zeros(4, np.float32)
    with pytest.raises(TypeError, match=r"invalid type on parameter #2.*np\.uint32"):
        SCALE.get_function("scale")(x, np.float32(1), 4, block=(4, 1, 1))


def test_a_double_for_a_float_parameter_is_refused():
    x = gpuarray.zeros(4, np.float32)
    with pytest.raises(TypeError, match=r"`float a`.*64-bit.*np\.float32"):
        SCALE.get_function("scale")(x, np.float64(1), np.uint32(4), block=(4, 1, 1))


def test_host_array_without_in_out_is_refused():
    with pytest.raises(TypeError, match=r"drv\.In"):
        SCALE.get_function("scale")(np.zeros(4, np.float32), np.float32(1), np.uint32(4), block=(4, 1, 1))


def test_race_names_the_python_line_and_launch():
    x = gpuarray.to_gpu(np.ones(64, dtype=np.float32))
    total = gpuarray.zeros(1, np.float32)
    with pytest.raises(racetrack.RaceError) as caught:
        SCALE.get_function("racy_sum")(x, np.uint32(64), total, block=(64, 1, 1))
    source_line = next(
        number
        for number, line in enumerate(open(__file__).read().splitlines(), 1)
        if "*total += x[i];" in line
    )
    assert source_line in caught.value.lines
    assert f"test_pycuda_face.py:{source_line}" in str(caught.value)
    assert "racy_sum: " in str(caught.value) and "in the launch at" in str(caught.value)


def test_checking_collects_instead_of_raising():
    x = gpuarray.to_gpu(np.ones(64, dtype=np.float32))
    total = gpuarray.zeros(1, np.float32)
    with racetrack.checking(raise_on_finding=False) as report:
        SCALE.get_function("racy_sum")(x, np.uint32(64), total, block=(64, 1, 1))
    assert not report.clean
    assert report.launches == [("racy_sum", len(report.findings))]
    with racetrack.checking(racecheck=False):
        SCALE.get_function("racy_sum")(x, np.uint32(64), total, block=(64, 1, 1))


def test_compile_error_and_missing_function():
    with pytest.raises(racetrack.CompileError, match=r"undefined"):
        SourceModule("__global__ void broken(float *x) { x[0] = not_declared; }")
    with pytest.raises(drv.LogicError):
        SCALE.get_function("no_such_kernel")


def test_no_extern_c_template_options_and_constant_memory():
    module = SourceModule(
        """
        __constant__ float weights[4];
        template <typename T> __global__ void weigh(T *x) { x[threadIdx.x] *= T(weights[threadIdx.x] * OFFSET); }
        template __global__ void weigh<float>(float *);
        """,
        no_extern_c=True,
        options=["-DOFFSET=2"],
    )
    weights, size = module.get_global("weights")
    assert size == 16
    drv.memcpy_htod(weights, np.array([1, 2, 3, 4], dtype=np.float32))
    x = np.ones(4, dtype=np.float32)
    module.get_function("weigh<float>")(drv.InOut(x), block=(4, 1, 1))
    assert x.tolist() == [2, 4, 6, 8]


def test_events_time_the_emulator():
    start, end = drv.Event(), drv.Event()
    x = gpuarray.to_gpu(np.ones(256, dtype=np.float32))
    start.record()
    SCALE.get_function("scale")(x, np.float32(0.5), np.uint32(256), block=(128, 1, 1), grid=(2, 1))
    end.record()
    end.synchronize()
    assert end.time_since(start) > 0
    assert np.array_equal(x.get(), np.full(256, 0.5, np.float32))


def test_events_count_the_hosts_work_between_them():
    # PyCUDA's own measure_gpuarray_speed_random times NumPy between two events and divides by
    # the result; on a GPU the idle stream counts that time, so the result is never 0 here either
    # (the Numba face: test_numba_face.py).
    import time

    from racetrack import cupy as cp

    def host_work():
        time.sleep(0.02)

    start, end = drv.Event(), drv.Event()
    start.record()
    host_work()
    end.record()
    assert end.time_since(start) >= 20
    start, end = cp.cuda.Event(), cp.cuda.Event()
    start.record()
    host_work()
    end.record()
    assert cp.cuda.get_elapsed_time(start, end) >= 20


def test_elementwise_and_reduction_kernels():
    lin = ElementwiseKernel("float a, float *x, float b, float *y", "y[i] = a*x[i] + b", "lin")
    x = gpuarray.to_gpu(np.arange(1000, dtype=np.float32))
    y = gpuarray.empty_like(x)
    lin(2, x, 1, y)
    assert np.array_equal(y.get(), 2 * np.arange(1000, dtype=np.float32) + 1)
    dot = ReductionKernel(
        np.float32, neutral="0", reduce_expr="a+b", map_expr="x[i]*y[i]", arguments="float *x, float *y"
    )
    small = gpuarray.to_gpu(np.arange(20, dtype=np.float32))
    assert float(dot(small, small).get()) == float((np.arange(20) ** 2).sum())
    largest = ReductionKernel(
        np.int32, neutral="-2147483647", reduce_expr="max(a, b)", arguments="const int *in"
    )
    values = np.random.default_rng(1).integers(-(10**6), 10**6, 5000).astype(np.int32)
    assert int(largest(gpuarray.to_gpu(values)).get()) == int(values.max())


def test_a_first_pycuda_script_runs_unchanged_but_for_its_imports():
    from racetrack.pycuda import cumath, curandom

    module = SourceModule("""
    __global__ void product(float *out, const float *a, const float *b)
    {
        const int i = threadIdx.x + blockDim.x * threadIdx.y;
        out[i] = a[i] * b[i];
    }
    """)
    a = np.random.default_rng(5).standard_normal((20, 20)).astype(np.float32)
    b = np.random.default_rng(6).standard_normal((20, 20)).astype(np.float32)
    out = np.zeros_like(a)
    module.get_function("product")(drv.Out(out), drv.In(a), drv.In(b), block=(20, 20, 1), grid=(1, 1))
    assert np.array_equal(out, a * b)

    curandom.seed(1)
    x = curandom.rand((300,))
    assert x.dtype == np.float32 and 0 <= float(x.get().min()) and float(x.get().max()) < 1
    combine = ElementwiseKernel(
        "float a, float *x, float b, float *y, float *z",
        "z[i] = blend(a * x[i], b * y[i])",
        "combine",
        preamble="__device__ float blend(float p, float q) { return p > q ? p : q; }",
    )
    z = gpuarray.empty_like(x)
    combine(np.float32(2), x, 3, x, z)
    assert np.array_equal(z.get(), np.maximum(2 * x.get(), 3 * x.get()))
    assert np.allclose(cumath.sqrt(x).get(), np.sqrt(x.get()))


STRUCTS = SourceModule("""
struct Affine { float scale; int shift; };

__global__ void affine(int *x, Affine f)
{
    x[threadIdx.x] = (int)(x[threadIdx.x] * f.scale) + f.shift;
}

__global__ void copy(float *out, const float *in)
{
    out[threadIdx.x] = in[threadIdx.x];
}
""")


def test_struct_by_value_and_uninitialized_reads():
    affine = np.dtype([("scale", np.float32), ("shift", np.int32)])
    f = np.zeros(1, affine)
    f["scale"], f["shift"] = 3, -1
    x = np.arange(6, dtype=np.int32)
    STRUCTS.get_function("affine")(drv.InOut(x), f[0], block=(6, 1, 1))
    assert x.tolist() == [3 * v - 1 for v in range(6)]
    # mem_alloc is cudaMalloc: nothing wrote it, so initcheck reports the read.
    never_written = drv.mem_alloc(16)
    out = np.zeros(4, np.float32)
    with pytest.raises(racetrack.MemoryAccessError, match=r"uninitialized read of global memory: in\[0\]"):
        STRUCTS.get_function("copy")(drv.Out(out), never_written, block=(4, 1, 1), shared=64)
    drv.memset_d32(never_written, 0, 4)
    STRUCTS.get_function("copy")(drv.Out(out), never_written, block=(4, 1, 1))
    assert out.tolist() == [0, 0, 0, 0]


@pytest.mark.parametrize("schedule", ["hardware", "random", "adversarial"])
def test_generated_kernels_are_clean_under_every_schedule(schedule):
    total = ReductionKernel(np.int32, "0", "a + b", "x[i]", "const int *x", name="total")
    double = ElementwiseKernel("int *x, int *y", "y[i] = 2 * x[i]", "double_it")
    values = np.arange(70_000, dtype=np.int32) % 7
    x = gpuarray.to_gpu(values)
    y = gpuarray.empty_like(x)
    with racetrack.checking(raise_on_finding=False, schedule=schedule, seed=5) as report:
        got = int(total(x).get())
        double(x, y)
    assert report.clean, str(report)
    assert report.launches == [("total_stage1", 0), ("total_stage2", 0), ("double_it", 0)]
    assert got == int(values.sum())
    assert np.array_equal(y.get(), 2 * values)


A_PEBIBYTE = 1 << 50  # more than any machine's memory, which holds the emulated device's


def test_an_allocation_the_machine_cannot_hold_is_pycudas_memory_error():
    # pycuda's fill_gpu_with_nans example halves its request until cuMemAlloc succeeds
    with pytest.raises(drv.MemoryError, match="cuMemAlloc failed: out of memory"):
        gpuarray.empty((A_PEBIBYTE // 4,), dtype=np.float32)
    with pytest.raises(drv.MemoryError):
        drv.mem_alloc(A_PEBIBYTE)
    assert issubclass(drv.MemoryError, drv.Error)


def test_a_large_fill_is_written_a_chunk_at_a_time_and_whole():
    a = gpuarray.empty(((1 << 22) * 2 + 5,), dtype=np.float32)
    a.fill(np.float32(np.nan))
    host = a.get()
    assert np.isnan(host).all() and host.size == (1 << 23) + 5


def test_a_device_memory_pool_hands_out_what_gpuarrays_use():
    from racetrack.pycuda.tools import DeviceMemoryPool, PageLockedMemoryPool

    pool = DeviceMemoryPool()
    a = gpuarray.to_gpu(np.arange(10, dtype=np.float32), allocator=pool.allocate)
    b = gpuarray.zeros(5, np.int32, allocator=pool.allocate)
    assert (pool.active_blocks, pool.active_bytes, pool.held_blocks) == (2, 60, 0)
    assert (a * 2).get().tolist() == [2.0 * v for v in range(10)] and b.get().tolist() == [0] * 5
    del a, b
    import gc

    gc.collect()
    assert pool.active_blocks == 0
    host_pool = PageLockedMemoryPool()
    host = host_pool.allocate((3, 4), np.float32)
    assert host.shape == (3, 4) and host_pool.active_blocks == 1


def test_a_kernel_launching_kernels_runs_its_children_after_it():
    # PyCUDA's demo_cdpSimplePrint: DynamicSourceModule and a launch from device code, which
    # NVRTC compiles as relocatable code; a child grid runs after its parent, as on CUDA 13.
    from racetrack.pycuda.compiler import DynamicSourceModule

    module = DynamicSourceModule(
        """
        __global__ void double_slice(int *slice, int width) {
            if (threadIdx.x < width) slice[threadIdx.x] *= 2;
        }
        __global__ void parent(int *data, int width) {
            if (threadIdx.x == 0) double_slice<<<1, width>>>(data + blockIdx.x * width, width);
        }
        """
    )
    data = gpuarray.to_gpu(np.arange(64, dtype=np.int32))
    module.get_function("parent")(data, np.int32(32), block=(32, 1, 1), grid=(2, 1))
    assert data.get().tolist() == [2 * i for i in range(64)]
    drv.Context.set_limit(drv.limit.PRINTF_FIFO_SIZE, 11 << 20)
    assert drv.Context.get_limit(drv.limit.PRINTF_FIFO_SIZE) == 11 << 20
    assert drv.Context.get_limit(drv.limit.DEV_RUNTIME_PENDING_LAUNCH_COUNT) == 2048
